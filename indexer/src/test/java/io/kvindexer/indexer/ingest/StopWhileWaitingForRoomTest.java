package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replay waiting for room in the ingest queue ({@code --ingest-queue-bytes}) when its stream is stopped (an
 * {@code /unregister}) hands nothing more to the index: the registry removes the worker's blocks once the stop
 * returns, and a batch applied on the way out would claim blocks for a worker nobody listens to. Real simulator,
 * real sockets; the writer holds its "applied" reports, so the queue stays full.
 */
class StopWhileWaitingForRoomTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    final TestResources open = new TestResources();

    /** Takes every batch at once and reports none applied until released; counts what came after the stop. */
    private static final class HeldWriter implements BatchSink {
        final AtomicInteger batches = new AtomicInteger();
        final AtomicInteger afterStop = new AtomicInteger();
        final List<Runnable> held = new ArrayList<>();
        volatile boolean stopping;

        @Override
        public void apply(WorkerKey worker, List<KvEvent> events) {
            batches.incrementAndGet();
            if (stopping) {
                afterStop.incrementAndGet();
            }
        }

        @Override
        public synchronized void apply(
                WorkerKey worker, List<KvEvent> events, Runnable applied, Consumer<Throwable> failed) {
            apply(worker, events);
            held.add(applied);
        }

        synchronized void release() {
            held.forEach(Runnable::run);
            held.clear();
        }

        @Override
        public void publisherRestarted(WorkerKey worker) {}
    }

    @Test
    void aReplayWaitingForRoomAppliesNothingOnceStopped() {
        InflightBytes inflight = new InflightBytes(1); // one batch fills it
        IngestPollers pollers = open.add(new IngestPollers(ZmqContext.shared(), 1, 1, inflight));
        EngineSimulator sim = open.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        for (int i = 0; i < 3; i++) {
            // seqs 0..2, sent before anyone listens: a store still queued in the simulator when the listener
            // subscribes would arrive live, and then no replay waits for room
            sim.storeSequence(IntStream.range(i * 100, i * 100 + 8).toArray(), 4)
                    .join();
        }
        HeldWriter writer = new HeldWriter();
        SequenceWatermark watermark = new SequenceWatermark();
        EngineListener listener = open.listener(
                new ListenerSpec(7, 0, sim.endpoint(), sim.replayEndpoint()),
                watermark,
                writer,
                ListenerOptions.defaults(pollers)
                        .with(o -> o.replayPermits = new ReplayPermits(ReplayPermits.DEFAULT)));
        Subscriptions.awaitActive(listener, sim, PATIENCE);
        sim.storeSequence(IntStream.range(900, 908).toArray(), 4).join(); // seq 3: 0..2 are replayed first

        // seq 0 filled the queue; the replay holds seq 1 and waits for room
        await().atMost(PATIENCE).until(StopWhileWaitingForRoomTest::aReplayWaitsForRoom);
        assertThat(writer.batches).hasValue(1);

        writer.stopping = true;
        assertThat(listener.stop()).as("the waiting replay notices the stop").isTrue();
        assertThat(writer.afterStop)
                .as("no batch handed to the index after the stop")
                .hasValue(0);
        writer.release();
        assertThat(watermark.get())
                .as("the watermark is the last batch applied: the next attempt asks for the rest again")
                .isZero();
    }

    private static boolean aReplayWaitsForRoom() {
        return Thread.getAllStackTraces().values().stream()
                .flatMap(Arrays::stream)
                .anyMatch(f -> f.getClassName().equals(InflightBytes.class.getName())
                        && f.getMethodName().equals("awaitRoom"));
    }
}
