package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.zeromq.ZContext;

/**
 * 300 listeners connect to 300 publishers at once while both cores are kept busy: every one must deliver its
 * marker batch. jeromq 0.6.0 leaves a few percent of such fresh connections without a ZMTP handshake (more
 * under load); the listener's handshake watch makes those connections again.
 */
class ManyFreshConnectionsTest {

    private static final int PAIRS = 300;

    @Test
    void everyOneOfThreeHundredFreshListenersDeliversItsMarker() throws Exception {
        AtomicBoolean busy = new AtomicBoolean(true);
        List<Thread> burners = new ArrayList<>();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            burners.add(Thread.ofPlatform().daemon().name("cpu-burner-" + i).start(() -> {
                long x = 0;
                while (busy.get()) {
                    x += System.nanoTime() % 7;
                }
                if (x == 42) {
                    System.out.print("");
                }
            }));
        }
        Set<Long> delivered = ConcurrentHashMap.newKeySet();
        BatchSink sink = new BatchSink() {
            @Override
            public void apply(WorkerKey worker, List<KvEvent> events) {
                delivered.add(worker.instanceId());
            }

            @Override
            public void publisherRestarted(WorkerKey worker) {}
        };
        CountingMetrics metrics = new CountingMetrics();
        List<AutoCloseable> open = new ArrayList<>();
        try (ZContext publishers = new ZContext(1);
                ZContext listeners = new ZContext(1)) {
            run(publishers, listeners, sink, metrics, delivered, open);
        } finally {
            busy.set(false);
            for (Thread t : burners) {
                t.join();
            }
        }
    }

    private static void run(
            ZContext publishers,
            ZContext listeners,
            BatchSink sink,
            CountingMetrics metrics,
            Set<Long> delivered,
            List<AutoCloseable> open)
            throws Exception {
        try {
            ListenerOptions options = ListenerOptions.defaults().with(o -> {
                o.context = listeners;
                o.handshakeTimeout = Duration.ofSeconds(1);
                o.metrics = metrics;
                o.replayPermits = new ReplayPermits(8);
            });
            List<EngineSimulator> sims = new ArrayList<>();
            for (int i = 0; i < PAIRS; i++) {
                EngineSimulator sim = EngineSimulator.Options.builder()
                        .replayEndpoint(null)
                        .hwm(1000)
                        .context(publishers)
                        .start();
                open.add(sim);
                sims.add(sim);
            }
            long start = System.nanoTime();
            for (int i = 0; i < PAIRS; i++) {
                EngineListener listener = new EngineListener(
                        new ListenerSpec(i, 0, sims.get(i).endpoint(), null),
                        new SequenceWatermark(),
                        sink,
                        ReadyGate.open(),
                        options);
                open.add(listener);
                listener.start();
            }
            // subscribed means handshaken: from then on the publisher sends to it
            await().atMost(Duration.ofSeconds(40))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> sims.stream().allMatch(s -> s.subscriptions() >= 1));
            for (EngineSimulator sim : sims) {
                sim.storeSequence(IntStream.range(0, 4).toArray(), 4);
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> delivered.size() == PAIRS);
            System.out.printf(
                    "%d fresh listeners delivered in %.1f s; %d connections remade after a stalled" + " handshake%n",
                    PAIRS, (System.nanoTime() - start) / 1e9, metrics.get("handshake.retries"));
            assertThat(delivered).hasSize(PAIRS);
        } finally {
            // listeners first, then publishers; each close waits for its thread, so close them side by side
            List<Thread> closers = new ArrayList<>();
            for (AutoCloseable c :
                    open.stream().filter(c -> c instanceof EngineListener).toList()) {
                closers.add(Thread.ofVirtual().start(() -> closeQuietly(c)));
            }
            for (Thread t : closers) {
                t.join();
            }
            open.stream().filter(c -> !(c instanceof EngineListener)).forEach(ManyFreshConnectionsTest::closeQuietly);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
