package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A watermark's applied hook is told of a batch when the index has applied it, not when it is handed over (which is
 * when the watermark itself passes it), and when it was handed over: the fleet bench measures its lag there, without
 * barriers on the writer, and splits it at the hand-over.
 */
class AppliedHookTest {

    @RegisterExtension
    final TestResources open = new TestResources();

    /** Holds each batch's "applied" report until {@link #applyAll}: an index writer that has not run yet. */
    private static final class HeldWriter implements BatchSink {
        private final List<Runnable> held = new ArrayList<>();

        @Override
        public void apply(WorkerKey worker, List<KvEvent> events) {
            apply(worker, events, () -> {}, failure -> {});
        }

        @Override
        public synchronized void apply(
                WorkerKey worker, List<KvEvent> events, Runnable applied, Consumer<Throwable> failed) {
            held.add(applied);
        }

        synchronized void applyAll() {
            held.forEach(Runnable::run);
            held.clear();
        }

        @Override
        public void publisherRestarted(WorkerKey worker) {
            throw new AssertionError("the engine did not restart");
        }
    }

    @Test
    void theHookHearsOfEachBatchOnceAppliedInSeqOrder() {
        IngestPollers pollers = open.add(new IngestPollers(ZmqContext.shared(), 1, 1, new InflightBytes(1 << 20)));
        EngineSimulator sim = open.add(EngineSimulator.Options.builder().start());
        HeldWriter writer = new HeldWriter();
        SequenceWatermark watermark = new SequenceWatermark();
        List<Long> told = new ArrayList<>();
        List<Long> times = new ArrayList<>();
        List<Long> handed = new ArrayList<>();
        long registered = System.nanoTime();
        watermark.onApplied((seq, handedNanos, nanos) -> {
            synchronized (told) {
                told.add(seq);
                handed.add(handedNanos);
                times.add(nanos);
            }
        });
        EngineListener listener = open.listener(
                new ListenerSpec(1, 0, sim.endpoint(), sim.replayEndpoint()),
                watermark,
                writer,
                ListenerOptions.defaults(pollers));
        Subscriptions.await(listener, sim, 1);

        for (int i = 0; i < 3; i++) {
            sim.storeSequence(IntStream.range(i * 8, i * 8 + 8).toArray(), 4).join();
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> watermark.get() == 2);
        synchronized (told) {
            assertThat(told).as("handed over, not yet applied: the hook waits").isEmpty();
        }

        long before = System.nanoTime();
        writer.applyAll();
        synchronized (told) {
            assertThat(told).containsExactly(0L, 1L, 2L);
            assertThat(times).allSatisfy(t -> assertThat(t).isGreaterThanOrEqualTo(before));
            assertThat(handed)
                    .as("each stamped when handed over: after the hook was set, before the writer applied it")
                    .allSatisfy(t -> assertThat(t).isBetween(registered, before));
        }
    }
}
