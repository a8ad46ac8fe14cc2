package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimEvent;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Replays whose answer reaches past what the live stream already holds. A replay of everything after a seq (a join,
 * a catch-up on connect) is bounded by the first live seq that arrives while it runs; a replay whose first reply lies
 * past its range takes nothing from it. Either way the batches the live stream brings are applied from the live
 * stream, never skipped as if the replay had applied them.
 */
class OpenEndedReplayTest {

    private static final long INSTANCE = 9;

    @RegisterExtension
    final TestResources resources = new TestResources();

    private final RecordingSink sink = new RecordingSink(false);
    private final CountingMetrics metrics = new CountingMetrics();
    private final SplittableRandom random = new SplittableRandom(5);

    /**
     * A registration joins an engine that has been quiet for over a second, so it asks for the engine's whole buffer.
     * The engine turns busy before it answers and publishes more than its buffer holds. Chased, the buffer would have
     * moved past the next expected seq by the second request: a loss, the worker's blocks dropped, and the live
     * batches between skipped as already applied. Bounded by the first live seq, the replay ends where the live stream
     * begins, and the index ends in the engine's exact state with nothing lost.
     */
    @Test
    void aJoinThatTheEngineOutrunsEndsWhereTheLiveStreamBegins() {
        EngineSimulator sim =
                resources.add(EngineSimulator.Options.builder().bufferSteps(100).start());
        SequenceWatermark watermark = new SequenceWatermark();
        EngineListener listener = joinOutrunByTheEngine(sim, watermark);
        // exact only once the live batch that bounded the replay is applied too, never between the two
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(1))
                .until(() -> listener.exactness().read().state() == ExactnessState.EXACT);
        assertThat(watermark.get()).isGreaterThanOrEqualTo(50);
        await().atMost(Duration.ofSeconds(60)).until(() -> watermark.get() == 199);

        assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(listener.lastError()).isNull();
        assertThat(metrics.get("unrecoverable")).isZero();
        ReplayRequests.assertAsked(sim, metrics, 1, "no second request chases the buffer");
        await().atMost(Duration.ofSeconds(30))
                .until(() -> listener.exactness().read().state() == ExactnessState.EXACT);
    }

    /**
     * The same join, but the engine's answer is cut after seq 9 (the ROUTER dropped the rest) and, asked again with
     * the live bound known, its buffer has moved past it: seqs 10..49 are reported lost once, and the first live batch,
     * which bounded the replay, is applied as the next one instead of asking for the lost range a second time.
     */
    @Test
    void aJoinThatLosesUpToTheLiveStreamReportsItOnceAndGoesOnLive() {
        EngineSimulator sim =
                resources.add(EngineSimulator.Options.builder().bufferSteps(100).start());
        sim.cutNextReplay(10, 40, false);
        SequenceWatermark watermark = new SequenceWatermark();
        EngineListener listener = joinOutrunByTheEngine(sim, watermark);
        await().atMost(Duration.ofSeconds(60)).until(() -> watermark.get() == 199);

        Set<Long> expected = new HashSet<>();
        for (long seq = 50; seq < 200; seq++) {
            expected.add(hashOf(seq));
        }
        // 0..9 were applied, then dropped with the loss; 50..199 came live
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE)).isEqualTo(expected);
        assertThat(metrics.get("unrecoverable")).isEqualTo(1);
        assertThat(metrics.get("unrecoverable.missing")).isEqualTo(40);
        ReplayRequests.assertAsked(sim, metrics, 2, "the lost range is not asked for again");
        assertThat(listener.lastError()).startsWith("replay incomplete: engine buffer starts at 100, requested 10");
        assertThat(listener.exactness().read().state()).isEqualTo(ExactnessState.DEGRADED);
    }

    /**
     * A catch-up that asked while the engine had published nothing new: "nothing from seq X" says nothing about the
     * batches the engine publishes after it answered, below the live batch that then bounds the replay. They are not
     * reported lost; the live batch shows them as a gap, and its replay brings them.
     */
    @Test
    void nothingNewWhenAskedLosesNothingPublishedAfterTheAnswer() {
        EngineSimulator sim =
                resources.add(EngineSimulator.Options.builder().bufferSteps(100).start());
        sim.deferReplays(true); // the join's request is held, answered below with the (empty) buffer of then
        SequenceWatermark watermark = new SequenceWatermark();
        EngineListener listener = listener(sim, watermark);
        await().atMost(Duration.ofSeconds(30)).until(() -> sim.replays().requests() == 1);
        sim.dropLive(4);
        for (int i = 0; i < 4; i++) {
            sim.publish(batch(i)); // seqs 0..3: buffered, not sent
        }
        sim.publish(batch(4)).join(); // seq 4 live: it bounds the replay
        await().atMost(Duration.ofSeconds(30)).until(() -> listener.replayBound() == 4);
        sim.deferReplays(false);
        sim.releaseDeferredReplays().join();
        await().atMost(Duration.ofSeconds(60)).until(() -> watermark.get() == 4);

        assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(metrics.get("unrecoverable")).isZero();
        assertThat(listener.lastError()).isNull();
        assertThat(metrics.get("replay.ok"))
                .as("the join's replay, then the gap's own")
                .isEqualTo(2);
        ReplayRequests.assertAsked(sim, metrics, 2, "one request each");
    }

    /**
     * A gap's replay whose first reply lies past the gap (the engine's buffer no longer reaches back that far): the
     * gap is reported lost and that reply is not taken. The live stream holds it, and the live batch that showed the
     * gap before it; taken, it would have made those look applied, and they would have been skipped.
     */
    @Test
    void aReplayWhoseFirstReplyLiesPastTheGapTakesNothingFromIt() throws InterruptedException {
        EngineSimulator sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        for (int i = 0; i <= 20; i++) {
            sim.publish(batch(i));
        }
        sim.publish(batch(21)).join(); // seqs 0..21 in the buffer
        // the answer's first replies (1..7) never reach the client: to it, the buffer starts at 8
        sim.cutNextReplay(0, 7, true);
        RecordingTarget target = new RecordingTarget();
        ReplayClient client = new ReplayClient(
                ZmqContext.shared(),
                sim.replayEndpoint(),
                ListenerOptions.defaults().replaySettings(),
                () -> false,
                () -> {});

        ReplayClient.Outcome outcome = client.replay(1, 6, target); // the gap 1..5, shown by live seq 6

        assertThat(target.lost).containsExactly("1..6: replay incomplete: engine buffer starts at 8, requested 1");
        assertThat(target.taken).as("seq 8 and after are the live stream's").isEmpty();
        assertThat(outcome.result()).isEqualTo(IngestMetrics.ReplayResult.INCOMPLETE);
        assertThat(outcome.requests()).isEqualTo(1);
    }

    /**
     * Seqs 0..49 in the engine's buffer before anyone listens; a registration that joins after a quiet second and
     * whose request is held; then seqs 50..199 live, so the buffer starts at 100 and live seq 50 bounds the replay;
     * then the held request answered with the buffer as it was (0..49, or what a cut leaves of it).
     */
    private EngineListener joinOutrunByTheEngine(EngineSimulator sim, SequenceWatermark watermark) {
        for (int i = 0; i < 49; i++) {
            sim.publish(batch(i));
        }
        // sent before anyone subscribes: a publisher thread that lags would hand a late one to the new SUB live,
        // and that batch's gap replay, not the join, would then run
        sim.publish(batch(49)).join();
        sim.deferReplays(true);
        EngineListener listener = listener(sim, watermark);
        await().atMost(Duration.ofSeconds(30)).until(() -> sim.replays().requests() == 1);
        for (int i = 50; i < 199; i++) {
            sim.publish(batch(i));
        }
        sim.publish(batch(199)).join();
        await().atMost(Duration.ofSeconds(30)).until(() -> listener.replayBound() == 50);
        sim.deferReplays(false);
        sim.releaseDeferredReplays().join();
        return listener;
    }

    /** Batch {@code seq}: one block of its own (hash {@link #hashOf}), stored on the GPU. */
    private SimEvent batch(long seq) {
        int[] tokens = random.ints(4, 0, 30_000).toArray();
        return EngineSimulator.stored(new long[] {hashOf(seq)}, null, tokens, 4, "GPU", null);
    }

    private static long hashOf(long seq) {
        return 1_000 + seq;
    }

    private EngineListener listener(EngineSimulator sim, SequenceWatermark watermark) {
        EngineListener listener = resources.listener(
                new ListenerSpec(INSTANCE, 0, sim.endpoint(), sim.replayEndpoint()),
                watermark,
                sink,
                metrics.options().with(o -> {
                    o.replayTimeout = Duration.ofSeconds(5);
                    o.catchUpOnConnect = true;
                }));
        Subscriptions.awaitActive(listener, sim, Duration.ofSeconds(30));
        return listener;
    }
}
