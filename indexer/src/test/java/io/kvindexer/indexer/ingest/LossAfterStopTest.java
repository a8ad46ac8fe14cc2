package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replay whose answer shows a loss only after its owner stopped reports nothing: the stream is going, its
 * watermark stays, and the next attempt asks again; a loss reported then would drop the worker's blocks
 * ({@link Stream#lost}) although a later catch-up may still recover them. The engine is the simulator (its ROUTER
 * holds the request until the test releases it); the client waits for a reply in one long poll, so the reply that
 * shows the loss is read after the stop without a race.
 */
class LossAfterStopTest {

    @RegisterExtension
    final TestResources resources = new TestResources();

    @Test
    void aReplyReadAfterTheStopReportsNoLoss() throws Exception {
        EngineSimulator sim =
                resources.add(EngineSimulator.Options.builder().bufferSteps(3).start());
        for (int i = 0; i < 10; i++) {
            sim.storeSequence(IntStream.range(i * 100, i * 100 + 8).toArray(), 4); // seqs 0..9
        }
        sim.storeSequence(IntStream.range(5000, 5008).toArray(), 4).get(30, TimeUnit.SECONDS); // 10; 8..10 buffered
        sim.deferReplays(true);

        AtomicBoolean stopped = new AtomicBoolean();
        ReplayClient.Settings s = ListenerOptions.defaults()
                .with(o -> o.replayTimeout = Duration.ofSeconds(60))
                .replaySettings();
        ReplayClient.Settings longPoll = new ReplayClient.Settings(
                s.timeout(),
                s.chunkBatches(),
                s.maxResumes(),
                s.backoffMin(),
                s.backoffMax(),
                s.permits(),
                s.handshake(),
                60_000);
        ReplayClient client =
                new ReplayClient(ZmqContext.shared(), sim.replayEndpoint(), longPoll, stopped::get, () -> {});
        RecordingTarget target = new RecordingTarget();
        CompletableFuture<ReplayClient.Outcome> replay = CompletableFuture.supplyAsync(() -> {
            try {
                return client.replay(2, ReplayClient.EVERYTHING, target);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> sim.replays().requests() == 1);
            stopped.set(true); // the stream stops while the client waits for the answer
            sim.releaseDeferredReplays().get(30, TimeUnit.SECONDS); // it begins at 8: 2..7 are gone

            assertThat(replay.get(60, TimeUnit.SECONDS))
                    .as("stopped before it ended")
                    .isNull();
            assertThat(target.lost).as("a loss read after the stop").isEmpty();
        } finally {
            stopped.set(true);
            client.close();
        }
    }
}
