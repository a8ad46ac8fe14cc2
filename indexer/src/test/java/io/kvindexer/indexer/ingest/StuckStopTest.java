package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A stream whose replay is stuck (here: in the index, which does not return) cannot close when it is stopped. The
 * bounded wait for it ends, and then the stop says so instead of passing for done: no new attempt of the same stream
 * starts beside the old one, which may still apply what it has in hand. Real simulator, real sockets.
 */
class StuckStopTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    final TestResources resources = new TestResources();

    /** Applies nothing until released: the first batch holds the thread that delivers it. */
    private static final class StuckSink implements BatchSink {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);

        @Override
        public void apply(WorkerKey worker, List<KvEvent> events) {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void publisherRestarted(WorkerKey worker) {}
    }

    @Test
    void aStopThatRunsOutItsWaitSaysSoAndNoSecondAttemptStarts() throws Exception {
        EngineSimulator sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        for (int i = 0; i < 3; i++) {
            sim.storeSequence(IntStream.range(i * 100, i * 100 + 8).toArray(), 4)
                    .join(); // seqs 0..2, nobody listens
        }
        StuckSink sink = new StuckSink();
        EngineListener listener = resources.listener(
                new ListenerSpec(7, 0, sim.endpoint(), sim.replayEndpoint()),
                new SequenceWatermark(),
                sink,
                new CountingMetrics().options().with(o -> o.stopWait = Duration.ofMillis(500)));
        Subscriptions.awaitActive(listener, sim, PATIENCE);
        sim.storeSequence(IntStream.range(900, 908).toArray(), 4).join(); // seq 3: replay 0..2 first
        assertThat(sink.entered.await(60, TimeUnit.SECONDS))
                .as("the replay reached the index")
                .isTrue();

        try {
            assertThat(listener.pause()).as("paused: the status changes").isTrue();
            assertThat(listener.resume())
                    .as("the previous attempt has not closed: no second one beside it")
                    .isFalse();
            assertThat(listener.status()).isEqualTo(ListenerStatus.PAUSED);
        } finally {
            sink.release.countDown();
        }
        await().atMost(PATIENCE).until(listener::resume); // once the replay has ended, the stream closes
        assertThat(listener.stop()).as("closed within the wait").isTrue();
    }
}
