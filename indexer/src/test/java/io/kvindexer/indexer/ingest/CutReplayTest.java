package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Long gaps replayed from an engine stand-in whose ROUTER behaves like vLLM's: ZeroMQ's default send high-water mark
 * (1,000), the whole answer sent in one loop, replies that do not fit dropped. The answer arrives with holes; every
 * batch is still in the engine's buffer, so the listener must end in the engine's exact state without dropping
 * anything.
 */
class CutReplayTest {

    private static final long INSTANCE = 7;

    @RegisterExtension
    final TestResources resources = new TestResources();

    private final RecordingSink sink = new RecordingSink(false);
    private final CountingMetrics metrics = new CountingMetrics();

    @ParameterizedTest(name = "gap {0}, {1}-block batches")
    @CsvSource({"1000, 1", "5000, 1", "20000, 1", "1000, 48", "5000, 48", "20000, 48"})
    void aGapInsideTheEngineBufferIsReplayedWholeThroughACutAnswer(int gap, int blocksPerBatch) {
        EngineSimulator sim = resources.add(
                EngineSimulator.Options.builder().bufferSteps(gap + 100).start());
        SequenceWatermark watermark = new SequenceWatermark();
        EngineListener listener = listener(sim, watermark);
        Workload work = new Workload(blocksPerBatch);

        sim.publish(work.next()).join(); // seq 0, live
        await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 0);
        sim.dropLive(gap);
        for (int i = 0; i < gap; i++) {
            sim.publish(work.next());
        }
        long published = System.nanoTime();
        sim.publish(work.next()).join(); // live: shows the gap
        await().atMost(Duration.ofSeconds(60)).until(() -> watermark.get() == gap + 1);

        assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(listener.lastError()).isNull();
        await().atMost(Duration.ofSeconds(30)).until(() -> metrics.get("replay.ok") == 1);
        // and maybe the live one too, buffered when asked
        assertThat(metrics.get("replay.recovered")).isBetween((long) gap, gap + 1L);
        assertThat(metrics.get("unrecoverable")).isZero();
        if (gap >= 20_000) { // far more than the high-water mark: the answer cannot have come whole
            assertThat(sim.replays().repliesDropped()).isPositive();
            assertThat(sim.replays().requests()).as("a cut answer is resumed").isGreaterThan(1);
        }
        System.out.printf(
                "gap %d x %d-block batches (%d B each): %d requests, %d replies dropped by the ROUTER, %d ms%n",
                gap,
                blocksPerBatch,
                work.lastBytes,
                sim.replays().requests(),
                sim.replays().repliesDropped(),
                (System.nanoTime() - published) / 1_000_000);
    }

    @ParameterizedTest(name = "keep {0}, drop {1}, end marker {2}")
    @CsvSource({
        "3, 4, true", // a hole inside the answer, the rest and the end marker after it
        "3, 4, false", // the same without the end marker
        "3, 100, true", // the tail dropped, the end marker fitted: looks like a short buffer, is not
        "20, 0, false" // the whole range, no end marker
    })
    void aCutAnswerIsAskedAgainFromTheNextExpectedSeqNeverDeclaredLost(int keep, int drop, boolean endMarker) {
        EngineSimulator sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        SequenceWatermark watermark = new SequenceWatermark();
        EngineListener listener = listener(sim, watermark);
        Workload work = new Workload(4);

        appliedThenBuffered(sim, watermark, work, 20);
        sim.cutNextReplay(keep, drop, endMarker);
        sim.publish(work.next()).join(); // seq 21
        await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 21);

        assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(listener.lastError()).isNull();
        assertThat(sink.gapLosses()).isEmpty();
        // the replay may apply seq 21 itself (it was buffered when asked) and end a moment later
        await().atMost(Duration.ofSeconds(30)).until(() -> metrics.get("replay.ok") == 1);
        assertThat(metrics.get("replay.recovered")).isBetween(20L, 21L);
        // a complete first answer needs no second request, whether or not its end marker came
        ReplayRequests.assertAsked(sim, metrics, keep >= 20 ? 1 : 2, "a cut answer is asked again once");
        // asked from the watermark, 0, whose reply is the answer's first: the cut keeps it and keep - 1 batches
        assertThat(sim.replays().lastStart()).isEqualTo(keep >= 20 ? 0 : keep);
    }

    /**
     * The answer to a gap's replay runs on past the live batch that showed the gap, through batches the live stream
     * also holds (unread while the replay runs). Cut there, it is not asked again: by a second request the engine's
     * buffer may have moved past the next expected seq, and a jump above the gap proves nothing lost, so the batches
     * between would be skipped by the replay and then by the live stream as already applied.
     */
    @Test
    void anAnswerCutPastTheGapEndsTheReplayAndTheLiveStreamBringsTheRest() {
        EngineSimulator sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        SequenceWatermark watermark = new SequenceWatermark();
        EngineListener listener = listener(sim, watermark);
        Workload work = new Workload(4);

        appliedThenBuffered(sim, watermark, work, 20);
        sim.cutNextReplay(22, 1, true); // seqs 1..22 go out, 23 is dropped, 24 and 25 follow
        for (int i = 0; i < 4; i++) {
            sim.publish(work.next()); // seqs 21 (shows the gap) to 24, live
        }
        sim.publish(work.next()).join(); // seq 25, live
        await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 25);

        assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(listener.lastError()).isNull();
        await().atMost(Duration.ofSeconds(30)).until(() -> metrics.get("replay.ok") == 1);
        ReplayRequests.assertAsked(sim, metrics, 1, "the cut came after the gap was filled");
    }

    @Test
    void onlyTheFirstReplyAboveTheRequestedSeqProvesABatchIsGone() {
        EngineSimulator sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        SequenceWatermark watermark = new SequenceWatermark();
        EngineListener listener = listener(sim, watermark);
        Workload work = new Workload(4);

        appliedThenBuffered(sim, watermark, work, 3);
        sim.skip(2); // seqs 4, 5: never buffered
        sim.dropLive(3);
        for (int i = 0; i < 3; i++) {
            sim.publish(work.next()); // seqs 6..8, buffered
        }
        sim.publish(work.next()).join(); // seq 9, live
        await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 9);
        await().atMost(Duration.ofSeconds(30)).until(() -> metrics.get("replay.incomplete") == 1);

        // the answer from 1 jumps from 3 to 6: asked again from 4, whose first reply (6) proves 4..5 gone
        ReplayRequests.assertAsked(sim, metrics, 2, "asked again from 4");
        assertThat(sim.replays().lastStart()).isEqualTo(4);
        assertThat(listener.lastError()).startsWith("replay incomplete: engine buffer starts at 6, requested 4");
        assertThat(sink.gapLosses()).containsExactly(new WorkerKey(INSTANCE, 0));
    }

    /** Seq 0 published live and applied, then seqs 1 to {@code n} buffered for replay and not sent. */
    private static void appliedThenBuffered(EngineSimulator sim, SequenceWatermark watermark, Workload work, int n) {
        sim.publish(work.next()).join();
        await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 0);
        sim.dropLive(n);
        for (int i = 0; i < n; i++) {
            sim.publish(work.next());
        }
    }

    private EngineListener listener(EngineSimulator sim, SequenceWatermark watermark) {
        EngineListener listener = resources.listener(
                new ListenerSpec(INSTANCE, 0, sim.endpoint(), sim.replayEndpoint()),
                watermark,
                sink,
                metrics.options().with(o -> o.replayTimeout = Duration.ofSeconds(5)));
        Subscriptions.awaitActive(listener, sim, Duration.ofSeconds(30));
        return listener;
    }

    /**
     * Batches of one store of {@code blocks} chained blocks (one block: ~100 B; 48 blocks of 16 tokens: ~3 KB), and
     * every third batch also removes a block stored earlier, so the order of replayed batches matters.
     */
    private static final class Workload {
        private final int blocks;
        private final SplittableRandom random = new SplittableRandom(11);
        private final List<Long> stored = new ArrayList<>();
        private long nextHash = 1;
        private int n;
        int lastBytes;

        Workload(int blocks) {
            this.blocks = blocks;
        }

        List<SimEvent> next() {
            int blockSize = blocks == 1 ? 4 : 16;
            long[] hashes = new long[blocks];
            for (int i = 0; i < blocks; i++) {
                hashes[i] = nextHash++;
                stored.add(hashes[i]);
            }
            int[] tokens = IntStream.range(0, blocks * blockSize)
                    .map(i -> random.nextInt(30_000))
                    .toArray();
            List<SimEvent> events = new ArrayList<>();
            events.add(EngineSimulator.stored(hashes, null, tokens, blockSize, "GPU", null));
            if (++n % 3 == 0) {
                long victim = stored.remove(random.nextInt(stored.size()));
                events.add(EngineSimulator.removed(new long[] {victim}, "GPU"));
            }
            lastBytes = blocks == 1 ? 100 : 3000;
            return events;
        }
    }
}
