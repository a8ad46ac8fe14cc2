package io.kvindexer.indexer.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.ingest.BatchSink;
import io.kvindexer.indexer.ingest.IdleListener;
import io.kvindexer.indexer.ingest.ListenerSnapshot;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.RunningListener;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An /unregister whose listener is slow to stop (its poller closes the connection only after a replay ends, up to
 * 30 s) holds the registry's lock no more: other workers register and /workers answers meanwhile. The same worker
 * registered again waits for the old listener's stop, then ends right (its new blocks are not taken by the old
 * removal). The listeners are stand-ins (a stop held on a latch); the registry and the indexes are real.
 */
class SlowListenerStopTest {

    private static final int BLOCK = 4;
    private static final long SECONDS = 20;

    private final CountDownLatch stopEntered = new CountDownLatch(1);
    private final CountDownLatch stopMayEnd = new CountDownLatch(1);
    /** every listener made, by instance, latest last */
    private final Map<Long, List<Held>> made = new ConcurrentHashMap<>();

    private final Indexers indexers = new Indexers(IndexOptions.defaults());
    private final WorkerRegistry registry = new WorkerRegistry(indexers, this::start);
    /** a thread per call: the common pool may have one thread, which the held stop takes */
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

    /** A listener stand-in whose stop, for instance 1 only, waits until the test lets it end. */
    private final class Held implements RunningListener {
        final ListenerSpec spec;
        volatile boolean closed;

        Held(ListenerSpec spec) {
            this.spec = spec;
        }

        @Override
        public ListenerSnapshot snapshot() {
            return IdleListener.pending(spec).snapshot();
        }

        @Override
        public boolean pause() {
            return false;
        }

        @Override
        public boolean resume() {
            return false;
        }

        @Override
        public void close() {
            if (spec.instanceId() == 1 && !closed) {
                stopEntered.countDown();
                try {
                    stopMayEnd.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            closed = true;
        }
    }

    private RunningListener start(ListenerSpec spec, SequenceWatermark watermark, BatchSink sink) {
        Held held = new Held(spec);
        made.computeIfAbsent(spec.instanceId(), id -> new CopyOnWriteArrayList<>())
                .add(held);
        return held;
    }

    @AfterEach
    void close() {
        stopMayEnd.countDown();
        registry.close();
        indexers.close();
        threads.close();
    }

    @Test
    void otherWorkersRegisterAndAreListedWhileOneStops() throws Exception {
        registry.register(registration(1, 5001));
        CompletableFuture<Void> unregister = unregisterInBackground();
        assertThat(stopEntered.await(SECONDS, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Void> other = CompletableFuture.runAsync(
                () -> {
                    try {
                        registry.register(registration(2, 5002));
                    } catch (RegistryException e) {
                        throw new IllegalStateException(e);
                    }
                },
                threads);
        other.get(SECONDS, TimeUnit.SECONDS); // the old code: held until the stop ends (never, here)
        assertThat(CompletableFuture.supplyAsync(() -> registry.list(null, null), threads)
                        .get(SECONDS, TimeUnit.SECONDS))
                .extracting(WorkerView::instanceId)
                .containsExactly(2L);
        assertThat(unregister).isNotDone();

        stopMayEnd.countDown();
        unregister.get(SECONDS, TimeUnit.SECONDS);
        assertThat(made.get(1L).getFirst().closed).isTrue();
    }

    @Test
    void theSameWorkerRegisteredAgainWhileItStopsEndsRight() throws Exception {
        registry.register(registration(1, 5001));
        ModelIndex index = indexers.getOrCreate("m", "default", BLOCK);
        WorkerKey worker = new WorkerKey(1, 0);
        index.submit(worker, List.of(stored(1, 8)));
        CompletableFuture<Void> unregister = unregisterInBackground();
        assertThat(stopEntered.await(SECONDS, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<Void> again = CompletableFuture.runAsync(
                () -> {
                    try {
                        registry.register(registration(1, 5001));
                    } catch (RegistryException e) {
                        throw new IllegalStateException(e);
                    }
                },
                threads);
        // it waits for the old listener: two listeners of one worker would share its watermark
        assertThatThrownBy(() -> again.get(500, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        assertThat(made.get(1L)).hasSize(1);

        stopMayEnd.countDown();
        unregister.get(SECONDS, TimeUnit.SECONDS);
        again.get(SECONDS, TimeUnit.SECONDS);
        assertThat(made.get(1L)).hasSize(2);
        assertThat(made.get(1L).getFirst().closed).isTrue();
        assertThat(made.get(1L).getLast().closed).isFalse();
        assertThat(registry.list(null, null)).extracting(WorkerView::instanceId).containsExactly(1L);

        // what the new listener stores stays: the old removal came before it
        ModelIndex now = indexers.get("m", "default").orElseThrow();
        now.submit(worker, List.of(stored(11, 18)));
        indexers.flushAll().get(SECONDS, TimeUnit.SECONDS);
        assertThat(blocksOf(now, worker)).isEqualTo(2);
    }

    /**
     * A state cut (a snapshot, a peer's {@code /dump}) taken while a worker stops comes after its removal, as when the
     * stop held the lock: else it could save the worker's blocks without its registration, and a restore would keep
     * them for good.
     */
    @Test
    void aStateCutWaitsForTheUnregisterInFlight() throws Exception {
        registry.register(registration(1, 5001));
        registry.register(registration(2, 5002));
        ModelIndex index = indexers.getOrCreate("m", "default", BLOCK);
        index.submit(new WorkerKey(1, 0), List.of(stored(1, 8)));
        CompletableFuture<Void> unregister = unregisterInBackground();
        assertThat(stopEntered.await(SECONDS, TimeUnit.SECONDS)).isTrue();

        CompletableFuture<List<SavedRegistration>> cut = CompletableFuture.supplyAsync(registry::export, threads);
        assertThatThrownBy(() -> cut.get(500, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        stopMayEnd.countDown();
        assertThat(cut.get(SECONDS, TimeUnit.SECONDS))
                .extracting(SavedRegistration::instanceId)
                .containsExactly(2L);
        indexers.flushAll().get(SECONDS, TimeUnit.SECONDS); // what the cut's caller does next
        assertThat(blocksOf(index, new WorkerKey(1, 0))).isZero();
        unregister.get(SECONDS, TimeUnit.SECONDS);
    }

    /**
     * A cut whose wait for an unregister in flight runs out leaves out the blocks of what is still being unregistered:
     * of one dp rank, that rank only (its instance's other rank stays registered, and in the cut, with its blocks).
     */
    @Test
    void aCutPastItsWaitLeavesOutOnlyTheRankStillBeingUnregistered() throws Exception {
        registry.register(registration(1, 5001));
        registry.register(new Registration(1, "tcp://127.0.0.1:5001", "m", "default", BLOCK, 1, null, null));
        CompletableFuture<Void> unregister = CompletableFuture.runAsync(
                () -> {
                    try {
                        registry.unregister(1, "m", "default", 1);
                    } catch (RegistryException e) {
                        throw new IllegalStateException(e);
                    }
                },
                threads);
        assertThat(stopEntered.await(SECONDS, TimeUnit.SECONDS)).isTrue();

        WorkerRegistry.Cut cut = registry.cut(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200));
        assertThat(cut.registrations()).extracting(SavedRegistration::dpRank).containsExactly(0);
        assertThat(cut.leaving().covers(new WorkerKey(1, 1))).isTrue();
        assertThat(cut.leaving().covers(new WorkerKey(1, 0))).isFalse();
        assertThat(cut.leaving().covers(new WorkerKey(2, 1))).isFalse();

        stopMayEnd.countDown();
        unregister.get(SECONDS, TimeUnit.SECONDS);
        assertThat(registry.cut(System.nanoTime()).leaving())
                .as("its blocks removed: nothing left out any more")
                .isEqualTo(LeavingWorkers.NONE);
    }

    private CompletableFuture<Void> unregisterInBackground() {
        return CompletableFuture.runAsync(
                () -> {
                    try {
                        registry.unregister(1, "m", "default", null);
                    } catch (RegistryException e) {
                        throw new IllegalStateException(e);
                    }
                },
                threads);
    }

    private static Registration registration(long id, int port) {
        return new Registration(id, "tcp://127.0.0.1:" + port, "m", "default", BLOCK, 0, null, null);
    }

    private static BlockStored stored(int from, int to) {
        int[] tokens = IntStream.rangeClosed(from, to).toArray();
        long[] hashes = EngineSimulator.sequenceHashes(tokens, BLOCK, null);
        return new BlockStored(hashes, false, 0, tokens, BLOCK, null, StorageTier.DEVICE, null, false);
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
