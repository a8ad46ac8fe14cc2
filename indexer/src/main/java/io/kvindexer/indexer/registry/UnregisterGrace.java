package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.index.IndexOp;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.index.SaltedBlocks;
import io.kvindexer.indexer.index.StoreTimes;
import io.kvindexer.indexer.ingest.BatchSink;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * {@code --unregister-grace}: the blocks of an unregistered worker, detached from its index (no answer names them)
 * and kept for the grace period, so that the same worker registering again at the same endpoint, with the same
 * block size, gets them back while its stream continues (the registry keeps its watermark, so the gap is replayed).
 * Whatever proves the stream did not continue drops them afterwards through the listener (an engine restart or an
 * unrecoverable gap drops the worker's blocks, attached ones included). Every outcome is counted per worker rank
 * ({@link GraceOutcome}). Not thread-safe, except the outcome counts and the sinks' calls (listener threads): the
 * registry's lock guards the rest.
 */
final class UnregisterGrace {

    private static final System.Logger LOG = System.getLogger(UnregisterGrace.class.getName());

    /**
     * One detached worker: where it was registered, its memberships as recovered stores in dump order, and their
     * last-store times on the tiers with a TTL (so a reattached block's TTL runs on from its last store).
     */
    private record Detached(
            String endpoint,
            String modelName,
            String tenantId,
            int blockSize,
            List<IndexOp> ops,
            StoreTimes times,
            List<SaltedBlocks> salts,
            long expiresAt) {}

    /** What a worker that came back gets: its memberships, their last-store times and its blocks' cache salts. */
    record Reattached(List<IndexOp> ops, StoreTimes times, List<SaltedBlocks> salts) {}

    private final long graceNanos;
    private final LongSupplier clock;
    private final Map<WorkerKey, Detached> detached = new HashMap<>();
    /**
     * Workers attached again whose stream has not yet applied a batch: a restart or an unrecoverable gap seen before
     * that drops the blocks given back, and is counted as their outcome. Written by listener threads too.
     */
    private final Map<WorkerKey, Boolean> unconfirmed = new ConcurrentHashMap<>();

    private final AtomicLongArray outcomes = new AtomicLongArray(GraceOutcome.values().length);

    UnregisterGrace(Duration grace, LongSupplier clock) {
        this.graceNanos = grace.toNanos();
        this.clock = clock;
    }

    boolean enabled() {
        return graceNanos > 0;
    }

    /**
     * Takes the memberships of {@code workers} (their listeners already stopped) out of {@code index}'s content
     * before they are removed: waits for their pending writes, then copies them from one dump walk.
     */
    void detach(ModelIndex index, Map<WorkerKey, String> workers) {
        expire();
        if (!WriterWait.done(index.flush(), LOG, "cannot detach the blocks of {0}: {1}", workers.keySet())) {
            return;
        }
        Map<WorkerKey, List<IndexOp>> ops = new HashMap<>();
        index.dump((worker, tier, hasParent, parent, block, local) -> {
            if (workers.containsKey(worker)) {
                ops.computeIfAbsent(worker, w -> new ArrayList<>())
                        .add(IndexOp.Store.recovered(tier, hasParent, parent, new long[] {block}, new long[] {local}));
            }
        });
        StoreTimes times = new StoreTimes(); // read after the walk, like a snapshot's
        index.lastStores((worker, tier, hashes, millis) -> {
            if (workers.containsKey(worker)) {
                times.times(worker, tier, hashes, millis);
            }
        });
        long expiresAt = clock.getAsLong() + graceNanos;
        workers.keySet().forEach(unconfirmed::remove);
        workers.forEach((worker, endpoint) -> detached.put(
                worker,
                new Detached(
                        endpoint,
                        index.modelName(),
                        index.tenantId(),
                        index.blockSize(),
                        ops.getOrDefault(worker, List.of()),
                        times,
                        index.cacheSaltsOf(worker),
                        expiresAt)));
        LOG.log(
                System.Logger.Level.INFO,
                "unregister grace: kept {0} memberships of {1} detached for {2} s",
                ops.values().stream().mapToInt(List::size).sum(),
                workers.keySet(),
                graceNanos / 1_000_000_000L);
    }

    /**
     * The detached memberships of {@code r}'s worker when it comes back within the grace period at the same endpoint
     * for the same index (empty when it held none); null (and forgotten) otherwise.
     */
    Reattached reattach(Registration r) {
        expire();
        WorkerKey key = new WorkerKey(r.instanceId(), r.dpRank());
        Detached d = detached.remove(key);
        if (d == null) {
            return null;
        }
        GraceOutcome outcome = d.blockSize() != r.blockSize()
                ? GraceOutcome.BLOCK_SIZE
                : !d.endpoint().equals(r.endpoint())
                        ? GraceOutcome.ENDPOINT
                        : !d.modelName().equals(r.modelName()) || !d.tenantId().equals(r.tenantId())
                                ? GraceOutcome.INDEX
                                : GraceOutcome.REATTACHED;
        count(outcome);
        boolean same = outcome == GraceOutcome.REATTACHED;
        if (same) {
            unconfirmed.put(key, Boolean.TRUE);
        }
        LOG.log(
                System.Logger.Level.INFO,
                same
                        ? "unregister grace: {0} is back; {1} detached memberships attached again"
                        : "unregister grace: {0} came back with another endpoint, index or block size ({2}); its {1}"
                                + " detached memberships are dropped",
                key,
                d.ops().size(),
                outcome.label());
        return same ? new Reattached(d.ops(), d.times(), d.salts()) : null;
    }

    /**
     * Where a detached worker's stream stands for a snapshot: its watermark (UNSET when unknown) and the batch at it
     * (null when unknown), so that a comeback after a restart can still tell an engine restart by that batch.
     */
    record SavedWatermark(long seq, SavedRegistration.WatermarkBatch batch) {}

    /**
     * What is detached now, for a snapshot: each worker with its watermark ({@code watermarks}) and the end of its
     * grace period on the wall clock.
     */
    List<DetachedWorker> export(Function<WorkerKey, SavedWatermark> watermarks) {
        expire();
        long nanoNow = clock.getAsLong();
        long wallNow = System.currentTimeMillis();
        List<DetachedWorker> out = new ArrayList<>();
        detached.forEach((key, d) -> {
            SavedWatermark at = watermarks.apply(key);
            out.add(new DetachedWorker(
                    new SavedRegistration(
                            key.instanceId(),
                            key.dpRank(),
                            d.endpoint(),
                            null,
                            null,
                            d.modelName(),
                            d.tenantId(),
                            d.blockSize(),
                            at.seq(),
                            at.batch()),
                    wallNow + TimeUnit.NANOSECONDS.toMillis(d.expiresAt() - nanoNow),
                    d.ops(),
                    d.times(),
                    d.salts()));
        });
        return out;
    }

    /**
     * Takes back what a snapshot carried: each worker stays detached until the end of its grace period as saved (at
     * most this replica's {@code --unregister-grace} from now); one whose period ended meanwhile is dropped and
     * counted as {@link GraceOutcome#EXPIRED}, as it would have been without the restart. Nothing without a grace.
     */
    void restore(List<DetachedWorker> saved) {
        long nanoNow = clock.getAsLong();
        long wallNow = System.currentTimeMillis();
        for (DetachedWorker w : saved) {
            SavedRegistration r = w.registration();
            WorkerKey key = new WorkerKey(r.instanceId(), r.dpRank());
            long left = Math.min(TimeUnit.MILLISECONDS.toNanos(w.expiresAtMillis() - wallNow), graceNanos);
            if (!enabled() || detached.containsKey(key)) {
                continue;
            }
            if (left <= 0) {
                count(GraceOutcome.EXPIRED);
                LOG.log(
                        System.Logger.Level.INFO,
                        "unregister grace: the grace period of {0} ended while the replica was down; {1} detached"
                                + " memberships dropped",
                        key,
                        w.ops().size());
                continue;
            }
            detached.put(
                    key,
                    new Detached(
                            r.endpoint(),
                            r.modelName(),
                            r.tenantId(),
                            r.blockSize(),
                            w.ops(),
                            w.times(),
                            w.salts(),
                            nanoNow + left));
            LOG.log(
                    System.Logger.Level.INFO,
                    "unregister grace: {0} memberships of {1} kept detached again after the restart, for {2} s more",
                    w.ops().size(),
                    key,
                    TimeUnit.NANOSECONDS.toSeconds(left));
        }
    }

    /** Whether {@code worker}'s blocks are kept detached now, waiting for it to come back. */
    boolean holds(WorkerKey worker) {
        return detached.containsKey(worker);
    }

    /** Drops what outlived the grace period. */
    void expire() {
        long now = clock.getAsLong();
        detached.values().removeIf(d -> {
            boolean expired = now - d.expiresAt() >= 0;
            if (expired) {
                count(GraceOutcome.EXPIRED);
                LOG.log(
                        System.Logger.Level.INFO,
                        "unregister grace: the grace period ended; {0} detached memberships dropped",
                        d.ops().size());
            }
            return expired;
        });
    }

    /** Memberships held detached now. */
    int memberships() {
        expire();
        return detached.values().stream().mapToInt(d -> d.ops().size()).sum();
    }

    /** Workers (ranks) counted with {@code outcome} so far. */
    long outcomes(GraceOutcome outcome) {
        return outcomes.get(outcome.ordinal());
    }

    private void count(GraceOutcome outcome) {
        outcomes.incrementAndGet(outcome.ordinal());
    }

    /**
     * {@code target} as a listener's sink that tells this grace whether a worker attached again continued its
     * stream (its first applied batch) or not (a restart or an unrecoverable gap before that, which drops them).
     */
    BatchSink watch(BatchSink target) {
        if (!enabled()) {
            return target;
        }
        return new BatchSink() {
            @Override
            public void apply(WorkerKey worker, List<KvEvent> events) {
                unconfirmed.remove(worker);
                target.apply(worker, events);
            }

            @Override
            public void apply(WorkerKey worker, List<KvEvent> events, Runnable applied, Consumer<Throwable> failed) {
                unconfirmed.remove(worker);
                target.apply(worker, events, applied, failed);
            }

            @Override
            public int blockSize() {
                return target.blockSize();
            }

            @Override
            public void publisherRestarted(WorkerKey worker) {
                if (unconfirmed.remove(worker) != null) {
                    count(GraceOutcome.RESTART);
                }
                target.publisherRestarted(worker);
            }

            @Override
            public void gapUnrecoverable(WorkerKey worker) {
                if (unconfirmed.remove(worker) != null) {
                    count(GraceOutcome.GAP);
                }
                target.gapUnrecoverable(worker);
            }
        };
    }
}
