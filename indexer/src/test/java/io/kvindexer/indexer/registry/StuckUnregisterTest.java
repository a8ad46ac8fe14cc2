package io.kvindexer.indexer.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
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
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An {@code /unregister} whose listener's stream does not close within its stop wait (its replay stuck in the index)
 * returns, but the worker is not taken for gone: a registration of the same instance is refused (409) while the old
 * stream runs, and its blocks are removed once it has closed, after the batch it had in hand. Real engines, sockets,
 * listeners, registry and index; the first listener of instance 1 hands its first batch to a writer that blocks.
 */
class StuckUnregisterTest {

    private static final int BLOCK = 4;
    private static final Duration PATIENCE = Duration.ofSeconds(60);
    private static final WorkerKey WORKER = new WorkerKey(1, 0);

    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final IngestPollers pollers =
            new IngestPollers(ZmqContext.shared(), 1, 1, new InflightBytes(InflightBytes.defaultBudget()));
    private final ListenerOptions options = ListenerOptions.defaults(pollers).with(o -> {
        o.stopWait = Duration.ofMillis(500);
        o.replayPermits = new ReplayPermits(ReplayPermits.DEFAULT);
    });
    private final Indexers indexers = new Indexers(IndexOptions.defaults());
    private final Map<Long, List<EngineListener>> made = new ConcurrentHashMap<>();
    /** instance 1's first batch is held until released, then handed to the index: a writer stuck in one write */
    private final CountDownLatch entered = new CountDownLatch(1);

    private final CountDownLatch release = new CountDownLatch(1);
    private final WorkerRegistry registry = new WorkerRegistry(indexers, this::start);
    private final EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults());
    private final EngineSimulator other = EngineSimulator.start(EngineSimulator.Options.defaults());

    /** Real listeners; only instance 1's first one writes through the stuck writer. */
    private RunningListener start(ListenerSpec spec, SequenceWatermark watermark, BatchSink sink) {
        List<EngineListener> before = made.computeIfAbsent(spec.instanceId(), id -> new CopyOnWriteArrayList<>());
        BatchSink through = spec.instanceId() == 1 && before.isEmpty() ? HeldSink.first(sink, entered, release) : sink;
        EngineListener listener = new EngineListener(spec, watermark, through, ReadyGate.open(), options);
        before.add(listener);
        listener.start();
        return listener;
    }

    @AfterEach
    void close() {
        release.countDown();
        registry.close();
        indexers.close();
        pollers.close();
        engine.close();
        other.close();
        threads.close();
    }

    @Test
    void aStuckStreamKeepsItsInstanceUntilItClosesAndTakesItsBlocksWithIt() throws Exception {
        for (int i = 0; i < 3; i++) {
            engine.storeSequence(IntStream.range(i * 100, i * 100 + 8).toArray(), BLOCK)
                    .join(); // seqs 0..2, unheard
        }
        registry.register(registration(1, engine));
        registry.register(registration(2, other)); // keeps the (model, tenant) index when instance 1 goes
        EngineListener first = made.get(1L).getFirst();
        await().atMost(PATIENCE).until(() -> engine.subscriptions() >= 1 && first.status() == ListenerStatus.ACTIVE);
        engine.storeSequence(IntStream.range(900, 908).toArray(), BLOCK).join(); // seq 3: replay 0..2 first
        assertThat(entered.await(PATIENCE.toSeconds(), TimeUnit.SECONDS))
                .as("the replay reached the writer")
                .isTrue();

        CompletableFuture<Void> unregister = CompletableFuture.runAsync(
                () -> {
                    try {
                        registry.unregister(1, "m", "default", null);
                    } catch (RegistryException e) {
                        throw new IllegalStateException(e);
                    }
                },
                threads);
        unregister.get(PATIENCE.toSeconds(), TimeUnit.SECONDS); // after the stop's wait of 500 ms, not a hang
        assertThat(registry.list(null, null)).extracting(WorkerView::instanceId).containsExactly(2L);

        assertThatThrownBy(() -> registry.register(registration(1, engine)))
                .as("the old stream still runs: no second one beside it")
                .isInstanceOfSatisfying(
                        RegistryException.class, e -> assertThat(e.kind()).isEqualTo(RegistryException.Kind.CONFLICT))
                .hasMessageContaining("is still being unregistered");
        assertThat(made.get(1L)).hasSize(1);

        release.countDown(); // seq 0 goes into the index; then the stream closes
        await().atMost(PATIENCE).until(() -> registry.watermark(1, 0).get() == 0); // applied before the removal came
        ModelIndex index = indexers.get("m", "default").orElseThrow();
        // (a cut no longer waits for a stream known to be stuck: its closing is waited for here)
        await().atMost(PATIENCE).untilAsserted(() -> {
            indexers.flushAll().get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
            assertThat(blocksOf(index, WORKER))
                    .as("the batch applied on the stuck stream's way out was removed with the worker")
                    .isZero();
        });

        registry.register(registration(1, engine)); // the old stream has closed: welcome back
        assertThat(made.get(1L)).hasSize(2);
        await().atMost(PATIENCE).until(() -> made.get(1L).getLast().status() == ListenerStatus.ACTIVE);
    }

    private static Registration registration(long id, EngineSimulator sim) {
        return new Registration(id, sim.endpoint(), "m", "default", BLOCK, 0, sim.replayEndpoint(), null);
    }

    private static long blocksOf(ModelIndex index, WorkerKey worker) {
        long[] n = {0};
        index.dump((w, tier, hasParent, parent, block, local) -> {
            if (w.equals(worker)) {
                n[0]++;
            }
        });
        return n[0];
    }
}
