package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A listener started from a known seq watermark (a snapshot, a peer's registrations, a re-registration) asks the
 * engine's replay endpoint for everything after it as soon as it connects, without waiting for a live batch to show
 * the gap; what the engine no longer has is an unrecoverable gap. The "indexer restart" here is a listener closed and
 * a new one made over the same sink, with a fresh watermark set to the old one's value.
 */
class ResumeFromWatermarkTest {

    private static final long INSTANCE = 21;
    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @RegisterExtension
    final TestResources resources = new TestResources();

    private final RecordingSink sink = new RecordingSink();
    private final CountingMetrics metrics = new CountingMetrics();

    private EngineListener listener(EngineSimulator sim, SequenceWatermark watermark) {
        return resources.listener(
                new ListenerSpec(INSTANCE, 0, sim.endpoint(), sim.replayEndpoint()),
                watermark,
                sink,
                metrics.options().with(o -> o.replayTimeout = Duration.ofSeconds(3)));
    }

    private static int[] tokens(int from) {
        return IntStream.range(from, from + 8).toArray();
    }

    /** Seqs 0..4 applied by a first listener, which then goes away with the watermark at 4. */
    private SequenceWatermark indexedThenGone(EngineSimulator sim) {
        SequenceWatermark first = new SequenceWatermark();
        EngineListener before = listener(sim, first);
        Subscriptions.awaitActive(before, sim, PATIENCE);
        for (int i = 0; i < 5; i++) {
            sim.storeSequence(tokens(i * 100), 4);
        }
        await().atMost(PATIENCE).until(() -> first.get() == 4);
        before.close();
        SequenceWatermark restored = new SequenceWatermark();
        restored.set(first.get());
        return restored;
    }

    @Test
    void aListenerFromAWatermarkCatchesUpOnConnectWithoutALiveBatch() {
        EngineSimulator sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        SequenceWatermark watermark = indexedThenGone(sim);
        // while no one listens: more stores, and removals of blocks the index holds
        sim.storeSequence(tokens(900), 4);
        sim.publish(EngineSimulator.removed(new long[] {EngineSimulator.sequenceHashes(tokens(0), 4, null)[1]}, "GPU"));
        sim.publish(EngineSimulator.removed(
                        new long[] {EngineSimulator.sequenceHashes(tokens(100), 4, null)[0]}, "GPU"))
                .join(); // seqs 5..7; then the engine is idle

        EngineListener after = listener(sim, watermark);
        await().atMost(PATIENCE).until(() -> watermark.get() == 7);

        assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(sim.replays().starts()).first().isEqualTo(4L); // the watermark itself: the same process?
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(sink.restarts()).isEmpty();
        assertThat(after.lastError()).isNull();
        await().atMost(PATIENCE).until(() -> metrics.get("replay.ok") == 1);

        sim.storeSequence(tokens(1000), 4).join(); // and the live stream goes on from there
        await().atMost(PATIENCE).until(() -> watermark.get() == 8);
        assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
    }

    @Test
    void anEngineWithNothingNewAnswersOnlyItsEndMarkerAndNothingIsLost() {
        EngineSimulator sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        SequenceWatermark watermark = indexedThenGone(sim);

        EngineListener after = listener(sim, watermark);
        await().atMost(PATIENCE).until(() -> sim.replays().requests() >= 1);
        await().atMost(PATIENCE).until(() -> metrics.get("replay.ok") == 1);
        assertThat(requestedFrom(sim))
                .as("from the watermark itself, which comes back (skipped), and nothing after it")
                .containsExactly(4L);
        assertThat(watermark.get()).isEqualTo(4);
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(after.lastError()).isNull();
        assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
    }

    @Test
    void whatTheEngineNoLongerHasIsAnUnrecoverableGap() {
        EngineSimulator sim =
                resources.add(EngineSimulator.Options.builder().bufferSteps(3).start());
        SequenceWatermark watermark = indexedThenGone(sim);
        for (int i = 0; i < 6; i++) {
            sim.storeSequence(tokens(2000 + i * 100), 4); // seqs 5..10; the buffer keeps 8..10
        }
        sim.storeSequence(tokens(5000), 4).join();

        EngineListener after = listener(sim, watermark);
        await().atMost(PATIENCE).until(() -> watermark.get() == 11);
        await().atMost(PATIENCE).until(() -> metrics.get("replay.incomplete") == 1);

        assertThat(sink.gapLosses()).containsExactly(new WorkerKey(INSTANCE, 0));
        assertThat(metrics.get("unrecoverable")).isEqualTo(1);
        assertThat(after.lastError())
                .startsWith("replay incomplete: engine buffer starts at 9, requested 5")
                .contains("dropped the blocks of worker " + INSTANCE + " dp_rank 0 (4 batches lost)");
        assertThat(after.snapshot().status()).isEqualTo(ListenerStatus.ACTIVE);
    }

    @Test
    void anEngineRestartedWhileNoOneListenedIsSeenAtTheResume() {
        EngineSimulator sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        SequenceWatermark watermark = indexedThenGone(sim);
        sim.restart();
        sim.storeSequence(tokens(7000), 4).join(); // seq 0 of the new process, below the watermark 4

        EngineListener after = listener(sim, watermark);
        // asks for 4.., gets the end marker only: the seq went back, the old blocks go, and 0.. is asked for
        await().atMost(PATIENCE).until(() -> sink.restarts().size() == 1);
        await().atMost(PATIENCE).until(() -> watermark.get() == 0);
        assertThat(requestedFrom(sim)).startsWith(4L, 0L);
        sim.storeSequence(tokens(7100), 4).join(); // seq 1, live: no second restart

        await().atMost(PATIENCE).until(() -> sink.restarts().size() == 1);
        await().atMost(PATIENCE).until(() -> watermark.get() == 1);
        assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(after.status()).isEqualTo(ListenerStatus.ACTIVE);
    }

    @Test
    void anOpenEndedReplayWhoseEndMarkerWasDroppedStillEndsExact() {
        EngineSimulator sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        SequenceWatermark watermark = indexedThenGone(sim);
        for (int i = 0; i < 10; i++) {
            sim.storeSequence(tokens(3000 + i * 100), 4); // seqs 5..14
        }
        sim.storeSequence(tokens(4000), 4).join();
        sim.cutNextReplay(6, 100, false); // 4..9 come back, the rest and the end marker do not

        EngineListener after = listener(sim, watermark);
        await().atMost(PATIENCE).until(() -> watermark.get() == 15);
        await().atMost(PATIENCE).until(() -> metrics.get("replay.ok") == 1);

        assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(after.lastError()).isNull();
        // from 4, the watermark (cut after 9), from 10 (to 15 and the end marker), from 16: an end marker after
        // batches may
        // follow a dropped tail, so an open-ended replay asks once more
        assertThat(requestedFrom(sim)).containsExactly(4L, 10L, 16L);
    }

    /**
     * Where the engine's replay requests started, in order, a request sent again because its DEALER's handshake
     * stalled (a loaded machine) counted once: each such repeat is one handshake retry.
     */
    private List<Long> requestedFrom(EngineSimulator sim) {
        List<Long> starts = sim.replays().starts();
        List<Long> once = new ArrayList<>();
        for (long from : starts) {
            if (once.isEmpty() || once.getLast() != from) {
                once.add(from);
            }
        }
        assertThat((long) (starts.size() - once.size()))
                .as("requests sent again: %s", starts)
                .isLessThanOrEqualTo(metrics.get("handshake.retries"));
        return once;
    }
}
