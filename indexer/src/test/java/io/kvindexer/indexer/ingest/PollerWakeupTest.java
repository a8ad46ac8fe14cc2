package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A command from another thread (a new stream, a stop, a replay's end) reaches an idle poller at once, not when its
 * selector's idle wait runs out: an indexer closing 1,024 listeners one after the other waited out that wait for
 * each (10 s), and 4,096 would outlast Kubernetes' 30 s grace period.
 */
class PollerWakeupTest {

    @RegisterExtension
    final TestResources open = new TestResources();

    @Test
    @Timeout(60) // a command left to the idle wait hangs here (ten minutes), it does not fail by itself
    void aListenerOpensAndClosesWithoutWaitingOutTheIdlePoller() {
        // an idle wait of ten minutes: a command that waited for it would outlast every bound below
        IngestPollers pollers =
                open.add(new IngestPollers(ZmqContext.shared(), 1, 1, new InflightBytes(1 << 20), 600_000));
        EngineSimulator sim = open.add(EngineSimulator.Options.builder().start());
        RecordingSink sink = new RecordingSink();
        EngineListener listener = open.listener(
                new ListenerSpec(1, 0, sim.endpoint(), sim.replayEndpoint()),
                new SequenceWatermark(),
                sink,
                ListenerOptions.defaults(pollers));
        Subscriptions.awaitActive(listener, sim, Duration.ofSeconds(10));
        sim.storeSequence(IntStream.range(0, 8).toArray(), 4).join();
        await().atMost(Duration.ofSeconds(10)).until(() -> sink.batches() == 1);
        long start = System.nanoTime();
        listener.close(); // waits until the poller has closed the stream, or 30 s
        long millis = (System.nanoTime() - start) / 1_000_000;

        assertThat(millis)
                .as("the stop was run by the poller, not left to its idle wait")
                .isLessThan(5_000);
        assertThat(pollers.leastLoaded().size())
                .as("the stream left its poller")
                .isZero();
    }
}
