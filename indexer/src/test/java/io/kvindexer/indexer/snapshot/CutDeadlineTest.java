package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.ingest.BatchSink;
import io.kvindexer.indexer.ingest.EngineListener;
import io.kvindexer.indexer.ingest.HeldSink;
import io.kvindexer.indexer.ingest.InflightBytes;
import io.kvindexer.indexer.ingest.IngestPollers;
import io.kvindexer.indexer.ingest.ListenerOptions;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.ingest.ReadyGate;
import io.kvindexer.indexer.ingest.ReplayPermits;
import io.kvindexer.indexer.ingest.RunningListener;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import io.kvindexer.indexer.ingest.ZmqContext;
import io.kvindexer.indexer.registry.Registration;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.registry.WorkerRegistry;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A state cut (a snapshot, a binary {@code /dump} with registrations) has one deadline for all its waits: streams
 * stuck in a replay (their {@code /unregister} answered, their stop still waiting or given up) hold it up that long
 * at most, however many they are. Real engines, sockets, listeners, registry and index; instances 1 and 2 hand their
 * first replayed batch to a writer that blocks until the test ends.
 */
class CutDeadlineTest {

    private static final int BLOCK = 4;
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final IngestPollers pollers =
            new IngestPollers(ZmqContext.shared(), 2, 4, new InflightBytes(InflightBytes.defaultBudget()));
    private final Indexers indexers = new Indexers(IndexOptions.defaults());
    private final CountDownLatch release = new CountDownLatch(1);
    private final Map<Long, CountDownLatch> entered = new ConcurrentHashMap<>();
    private final Map<Long, EngineListener> made = new ConcurrentHashMap<>();
    private final List<EngineSimulator> engines = IntStream.range(0, 3)
            .mapToObj(i -> EngineSimulator.start(EngineSimulator.Options.defaults()))
            .toList();
    private WorkerRegistry registry;

    @AfterEach
    void close() {
        release.countDown();
        // the unregisters still in flight end once their replays do: let them, while the writers that apply their
        // removals are still open (closed first, a removal is never applied and each waits out its 30 s bound)
        threads.close();
        if (registry != null) {
            registry.close();
        }
        indexers.close();
        pollers.close();
        engines.forEach(EngineSimulator::close);
    }

    @Test
    void streamsKnownToBeStuckAreNotWaitedForByEveryCut() throws Exception {
        registry = registry(Duration.ofMillis(500));
        stickAndUnregister(1, 2).get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // each stop gave up after 500 ms

        long ms = timedCut(Duration.ofSeconds(5));

        assertThat(ms)
                .as("a cut does not wait again for streams whose stop already gave up (it waited 30 s for them"
                        + " at every cut)")
                .isLessThan(20_000);
    }

    @Test
    void unregistersInFlightHoldACutUpToItsDeadlineAtMost() throws Exception {
        registry = registry(Duration.ofSeconds(40)); // the stops are still waiting while the cut is taken
        Future<?> unregisters = stickAndUnregister(1, 2);

        long ms = timedCut(Duration.ofSeconds(2));

        assertThat(ms)
                .as("the cut's 2 s bound all its waits, not the unregisters' 30 s nor their 40 s stop waits")
                .isLessThan(15_000);
        assertThat(unregisters.isDone())
                .as("the unregisters were still waiting")
                .isFalse();
    }

    /**
     * How long one cut with {@code patience} took, in ms. The stuck batches hold an index writer too, so it ends
     * with the writers not catching up: the snapshot fails and the next one tries again.
     */
    private long timedCut(Duration patience) throws Exception {
        long t0 = System.nanoTime();
        try {
            StateCut.write(registry, indexers, patience, new ByteArrayOutputStream());
        } catch (IOException e) {
            assertThat(e).hasMessageContaining("did not catch up");
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    }

    private WorkerRegistry registry(Duration stopWait) {
        ListenerOptions options = ListenerOptions.defaults(pollers).with(o -> {
            o.stopWait = stopWait;
            o.replayPermits = new ReplayPermits(ReplayPermits.DEFAULT);
        });
        return new WorkerRegistry(indexers, (spec, watermark, sink) -> start(spec, watermark, sink, options));
    }

    /**
     * Registers instance 0 (which keeps the index) and {@code stuck}, gets each of {@code stuck} into a replay whose
     * batch blocks in its writer, and unregisters them all at once; returns the unregisters (done once their stops
     * gave up).
     */
    private Future<?> stickAndUnregister(long... stuck) throws Exception {
        for (long id : stuck) {
            EngineSimulator engine = engines.get((int) id);
            for (int i = 0; i < 3; i++) {
                engine.storeSequence(IntStream.range(i * 100, i * 100 + 8).toArray(), BLOCK)
                        .join(); // seqs 0..2, unheard
            }
            entered.put(id, new CountDownLatch(1));
        }
        registry.register(registration(0, engines.getFirst()));
        for (long id : stuck) {
            EngineSimulator engine = engines.get((int) id);
            registry.register(registration(id, engine));
            await().atMost(PATIENCE)
                    .until(() -> engine.subscriptions() >= 1 && made.get(id).status() == ListenerStatus.ACTIVE);
            engine.storeSequence(IntStream.range(900, 908).toArray(), BLOCK).join(); // seq 3: replay 0..2 first
            assertThat(entered.get(id).await(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                    .as("instance %d's replay reached the writer", id)
                    .isTrue();
        }
        List<Future<?>> all = java.util.Arrays.stream(stuck)
                .mapToObj(id -> threads.submit(() -> {
                    try {
                        registry.unregister(id, "m", "default", null);
                    } catch (RegistryException e) {
                        throw new IllegalStateException(e);
                    }
                }))
                .<Future<?>>map(f -> f)
                .toList();
        await().atMost(PATIENCE).until(() -> registry.instanceCount() == 1);
        return threads.submit(() -> {
            for (Future<?> f : all) {
                f.get();
            }
            return null;
        });
    }

    /** Real listeners; instances other than 0 write their first batch through a writer that blocks. */
    private RunningListener start(
            ListenerSpec spec, SequenceWatermark watermark, BatchSink sink, ListenerOptions options) {
        CountDownLatch in = entered.get(spec.instanceId());
        BatchSink through = in == null ? sink : HeldSink.first(sink, in, release);
        EngineListener listener = new EngineListener(spec, watermark, through, ReadyGate.open(), options);
        made.put(spec.instanceId(), listener);
        listener.start();
        return listener;
    }

    private static Registration registration(long id, EngineSimulator sim) {
        return new Registration(id, sim.endpoint(), "m", "default", BLOCK, 0, sim.replayEndpoint(), null);
    }
}
