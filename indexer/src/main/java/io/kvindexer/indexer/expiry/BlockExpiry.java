package io.kvindexer.indexer.expiry;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.AppliedOps;
import io.kvindexer.indexer.index.ApplyStatus;
import io.kvindexer.indexer.index.IndexOp;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.index.StoreTimes;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

/**
 * Applies an {@link ExpiryPolicy} from outside the index: it follows each worker's stores, removes and clears on the
 * bounded tiers as the writer threads apply them ({@link AppliedOps}), and removes what is due with ordinary
 * {@link IndexOp.Remove} ops, as if the engine had removed the blocks. So the index applies them exactly as an
 * engine's {@code BlockRemoved} (the membership goes; descendants stay, unreachable to a prefix match from the
 * worker's side until stored again), counts them as removed events, and its structure needs no field for this.
 *
 * <p>What is due is decided on the worker's writer thread when the removal's turn comes
 * ({@link ModelIndex#submitWhenDue}), so a block stored again while the removal waited in the queue stays. One step
 * removes at most {@value #CHUNK} blocks (one write-lock hold); a longer sweep queues its next step behind the writes
 * that arrived meanwhile, like the chunked scan of a clear, so a query never waits long.
 */
public final class BlockExpiry implements AppliedOps, AutoCloseable {

    /** blocks removed per step (one write-lock acquisition) */
    static final int CHUNK = 4096;

    private static final int TIERS = StorageTier.values().length;
    private static final System.Logger LOG = System.getLogger(BlockExpiry.class.getName());

    private final ExpiryPolicy policy;
    private final long[] ttlNanos = new long[TIERS];
    private final boolean[] followed = new boolean[TIERS];
    private final ConcurrentHashMap<ModelIndex, ConcurrentHashMap<WorkerKey, WorkerBlocks>> indexes =
            new ConcurrentHashMap<>();
    /**
     * last-store times announced for an index's recovered stores, read as they are applied: recovery's and those of
     * the reattaches after {@code --unregister-grace}, which may overlap
     */
    private final ConcurrentHashMap<ModelIndex, List<StoreTimes>> recovered = new ConcurrentHashMap<>();

    private final LongAdder[][] expired = new LongAdder[TIERS][ExpiryReason.values().length];
    /** looks for blocks past their TTL; null without any TTL (capacity is checked as stores are applied) */
    private final ScheduledExecutorService sweeper;

    public BlockExpiry(ExpiryPolicy policy) {
        this.policy = policy;
        for (StorageTier t : StorageTier.values()) {
            Duration ttl = policy.ttl().get(t);
            ttlNanos[t.ordinal()] = ttl == null ? 0 : ttl.toNanos();
            followed[t.ordinal()] = policy.tracks(t);
            for (ExpiryReason r : ExpiryReason.values()) {
                expired[t.ordinal()][r.ordinal()] = new LongAdder();
            }
        }
        if (policy.ttl().isEmpty()) {
            sweeper = null;
        } else {
            long period = sweepPeriod(policy).toMillis();
            sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "block-expiry");
                t.setDaemon(true);
                return t;
            });
            sweeper.scheduleWithFixedDelay(this::sweepTtl, period, period, TimeUnit.MILLISECONDS);
        }
    }

    /** An eighth of the shortest TTL, within 25 ms .. 1 s: a block outlives its TTL by at most that (plus the queue). */
    static Duration sweepPeriod(ExpiryPolicy policy) {
        long shortest = policy.ttl().values().stream()
                .mapToLong(Duration::toMillis)
                .min()
                .orElse(1000);
        return Duration.ofMillis(Math.clamp(shortest / 8, 25, 1000));
    }

    public ExpiryPolicy policy() {
        return policy;
    }

    /** Blocks removed so far on {@code tier} for {@code reason}. */
    public long expired(StorageTier tier, ExpiryReason reason) {
        return expired[tier.ordinal()][reason.ordinal()].sum();
    }

    /** Blocks followed (held on a bounded tier) right now, for tests and the soak bench. */
    public long followedBlocks() {
        long n = 0;
        for (Map<WorkerKey, WorkerBlocks> workers : indexes.values()) {
            for (WorkerBlocks wb : workers.values()) {
                synchronized (wb) {
                    n += wb.size();
                }
            }
        }
        return n;
    }

    // ---- AppliedOps: on the worker's writer thread -------------------------------------------------------------

    @Override
    public void applied(ModelIndex index, WorkerKey worker, List<? extends IndexOp> ops, ApplyStatus[] statuses) {
        ConcurrentHashMap<WorkerKey, WorkerBlocks> workers = indexes.get(index);
        WorkerBlocks wb = workers == null ? null : workers.get(worker);
        long now = System.nanoTime();
        List<StoreTimes> times = recovered.isEmpty() ? null : recovered.get(index);
        long wallNow = times == null ? 0 : System.currentTimeMillis();
        int reorder = 0; // bit per tier that got blocks with an older time than its newest
        for (int i = 0; i < ops.size(); i++) {
            switch (ops.get(i)) {
                case IndexOp.Store s -> {
                    int tier = s.tier().ordinal();
                    // a store refused for its parent changed nothing; every other store holds its (cut) chain
                    if (!followed[tier]
                            || s.blockHashes().length == 0
                            || statuses[i] == ApplyStatus.PARENT_BLOCK_NOT_FOUND) {
                        continue;
                    }
                    if (wb == null) {
                        workers = indexes.computeIfAbsent(index, ix -> new ConcurrentHashMap<>());
                        wb = workers.computeIfAbsent(worker, w -> new WorkerBlocks());
                    }
                    Long2LongOpenHashMap last =
                            times != null && ttlNanos[tier] > 0 && s.source() == IndexOp.Store.Source.RECOVERED
                                    ? timesOf(times, worker, s.tier())
                                    : null;
                    synchronized (wb) {
                        if (last == null) {
                            wb.stored(tier, s.blockHashes(), now);
                        } else {
                            for (long h : s.blockHashes()) {
                                long at = last.get(h);
                                wb.storedAt(tier, h, at == Long.MIN_VALUE ? now : now - ageNanos(wallNow, at));
                            }
                            reorder |= 1 << tier;
                        }
                    }
                }
                case IndexOp.Remove r -> {
                    if (wb != null && followed[r.tier().ordinal()]) {
                        synchronized (wb) {
                            wb.removed(r.tier().ordinal(), r.blockHashes());
                        }
                    }
                }
                case IndexOp.Clear c -> {
                    if (wb != null) {
                        synchronized (wb) {
                            wb.clear();
                        }
                    }
                }
            }
        }
        if (wb == null) {
            return;
        }
        synchronized (wb) {
            for (int t = 0; t < TIERS; t++) {
                if ((reorder & 1 << t) != 0) {
                    wb.reorder(t);
                }
            }
            if (policy.maxBlocksPerWorker() > 0 && !wb.sweepQueued && wb.overCap(policy.maxBlocksPerWorker())) {
                queueSweep(index, worker, wb);
            } else if (wb.isEmpty() && !wb.sweepQueued) {
                workers.remove(worker, wb); // nothing followed: no memory kept for this worker
            }
        }
    }

    /** The first of {@code times} that has times for the worker's blocks on {@code tier}; null when none has. */
    private static Long2LongOpenHashMap timesOf(List<StoreTimes> times, WorkerKey worker, StorageTier tier) {
        for (StoreTimes t : times) {
            Long2LongOpenHashMap m = t.of(worker, tier);
            if (m != null) {
                return m;
            }
        }
        return null;
    }

    /**
     * How long ago (in nanos, from {@code wallNow}) a block was last stored at {@code epochMillis} by another
     * process's clock: a time in the future (clock skew between replicas) counts as now, and a very old one is capped
     * so the monotonic arithmetic cannot overflow.
     */
    static long ageNanos(long wallNow, long epochMillis) {
        long age = Math.clamp(wallNow - epochMillis, 0L, MAX_AGE_MILLIS);
        return TimeUnit.MILLISECONDS.toNanos(age);
    }

    /** ages beyond this (about 100 years) are all "long expired" */
    private static final long MAX_AGE_MILLIS = TimeUnit.DAYS.toMillis(36_500);

    @Override
    public boolean keepsStoreTimes() {
        return !policy.ttl().isEmpty();
    }

    @Override
    public void lastStores(ModelIndex index, StoreTimes.Sink sink) {
        Map<WorkerKey, WorkerBlocks> workers = indexes.get(index);
        if (workers == null) {
            return;
        }
        for (Map.Entry<WorkerKey, WorkerBlocks> e : workers.entrySet()) {
            for (int t = 0; t < TIERS; t++) {
                if (ttlNanos[t] == 0) {
                    continue; // only a TTL depends on the time; a cap evicts by order, which a dump does not keep
                }
                long[][] held;
                long nanoNow;
                long wallNow;
                WorkerBlocks wb = e.getValue();
                synchronized (wb) {
                    held = wb.times(t);
                    nanoNow = System.nanoTime();
                    wallNow = System.currentTimeMillis();
                }
                if (held[0].length == 0) {
                    continue;
                }
                long[] millis = held[1];
                for (int i = 0; i < millis.length; i++) {
                    millis[i] = wallNow - TimeUnit.NANOSECONDS.toMillis(nanoNow - millis[i]);
                }
                sink.times(e.getKey(), StorageTier.ofOrdinal(t), held[0], millis);
            }
        }
    }

    @Override
    public void recoveredStores(ModelIndex index, StoreTimes times) {
        recovered.merge(
                index,
                List.of(times),
                (a, b) -> Stream.concat(a.stream(), b.stream()).toList());
    }

    @Override
    public void recoveredStoresApplied(ModelIndex index, StoreTimes times) {
        recovered.computeIfPresent(index, (ix, all) -> {
            List<StoreTimes> rest = all.stream().filter(t -> t != times).toList();
            return rest.isEmpty() ? null : rest;
        });
    }

    @Override
    public void workerRemoved(ModelIndex index, WorkerKey worker) {
        Map<WorkerKey, WorkerBlocks> workers = indexes.get(index);
        if (workers != null) {
            forget(workers.remove(worker));
        }
    }

    @Override
    public void instanceRemoved(ModelIndex index, long instanceId) {
        Map<WorkerKey, WorkerBlocks> workers = indexes.get(index);
        if (workers != null) {
            workers.entrySet().removeIf(e -> {
                if (e.getKey().instanceId() != instanceId) {
                    return false;
                }
                forget(e.getValue());
                return true;
            });
        }
    }

    @Override
    public void indexDropped(ModelIndex index) {
        indexes.remove(index);
        // writes still queued for the dropped index may follow some blocks again: forget them once they are applied
        index.flush().thenRun(() -> indexes.remove(index));
    }

    /** A queued sweep of a forgotten worker finds nothing to remove. */
    private static void forget(WorkerBlocks wb) {
        if (wb != null) {
            synchronized (wb) {
                wb.clear();
            }
        }
    }

    // ---- sweeps ----------------------------------------------------------------------------------------------

    /** On the sweep thread: queues a step for every worker whose oldest block on a TTL tier has expired. */
    private void sweepTtl() {
        try {
            long now = System.nanoTime();
            indexes.forEach((index, workers) -> workers.forEach((worker, wb) -> {
                synchronized (wb) {
                    if (!wb.sweepQueued && wb.anyExpired(ttlNanos, now)) {
                        queueSweep(index, worker, wb);
                    }
                }
            }));
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "block expiry sweep failed", e); // the next one tries again
        }
    }

    /** Caller holds {@code wb}'s monitor. */
    private void queueSweep(ModelIndex index, WorkerKey worker, WorkerBlocks wb) {
        wb.sweepQueued = true;
        index.submitWhenDue(worker, () -> step(index, worker, wb));
    }

    /** On the worker's writer thread: the removes due now (at most {@link #CHUNK}); queues the next step if needed. */
    private List<IndexOp> step(ModelIndex index, WorkerKey worker, WorkerBlocks wb) {
        synchronized (wb) {
            wb.sweepQueued = false;
            WorkerBlocks.Due due =
                    wb.due(ttlNanos, policy.maxBlocksPerWorker(), policy.evictDownTo(), System.nanoTime(), CHUNK);
            for (int t = 0; t < TIERS; t++) {
                for (int r = 0; r < due.counts()[t].length; r++) {
                    if (due.counts()[t][r] > 0) {
                        expired[t][r].add(due.counts()[t][r]);
                    }
                }
            }
            if (due.more()) {
                queueSweep(index, worker, wb);
            }
            return due.ops();
        }
    }

    @Override
    public void close() {
        if (sweeper != null) {
            sweeper.shutdownNow();
        }
    }
}
