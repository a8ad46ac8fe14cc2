package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.hash.BlockHasher;
import it.unimi.dsi.fastutil.HashCommon;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The prefix index of one (model, tenant) with its fixed block size: the single entry point the rest of the
 * service uses (listeners write, HTTP reads). Thread-safe. Writes are asynchronous and ordered per worker
 * (sticky to one writer thread by instance id, so every dp rank of an instance shares one thread and
 * {@link #removeInstance} is ordered after all of them); each writer thread applies them to its own shard
 * ({@link ShardedIndex}). {@link #flush()} is the barrier that makes them visible to a following read.
 */
public final class ModelIndex {

    /** {@link #failNextWrite}: the next write of a worker fails after some of its ops */
    private record WriteFault(WorkerKey worker, int afterOps, boolean dropFails) {}

    /** where a failed write that no listener delivered is reported when nobody owns the streams: nowhere */
    private static final Consumer<FailedWrite> NOBODY = failure -> {};

    private final String modelName;
    private final String tenantId;
    private final int blockSize;
    private final IndexOptions options;
    private final IndexWriters writers;
    /** told of every applied change (null: nobody listens, and nothing extra is done per write) */
    private final AppliedOps observer;
    /** hears of a failed write that no listener delivered ({@link Indexers#onFailedWrite}) */
    private final Consumer<FailedWrite> unheard;
    /** test seam, null unless a test armed it: read once per write */
    private volatile WriteFault fault;
    /** test seam: the worker whose drop after a failed write fails too (only the failure path reads it) */
    private volatile WorkerKey failingDrop;

    /** the salts of salted stores, with {@code --mix-cache-salt}; null without */
    private final CacheSalts salts;

    /** replaced (with its counters), once, when recovery hands over a staged index ({@link #adopt}) */
    private volatile ShardedIndex index;

    public ModelIndex(String modelName, String tenantId, int blockSize, IndexOptions options, IndexWriters writers) {
        this(modelName, tenantId, blockSize, options, writers, null, NOBODY);
    }

    ModelIndex(
            String modelName,
            String tenantId,
            int blockSize,
            IndexOptions options,
            IndexWriters writers,
            AppliedOps observer,
            Consumer<FailedWrite> unheard) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block_size must be > 0, got " + blockSize);
        }
        this.modelName = Objects.requireNonNull(modelName, "modelName");
        this.tenantId = Objects.requireNonNull(tenantId, "tenantId");
        this.blockSize = blockSize;
        this.options = Objects.requireNonNull(options, "options");
        this.writers = Objects.requireNonNull(writers, "writers");
        this.observer = observer;
        this.unheard = Objects.requireNonNull(unheard, "unheard");
        this.index = new ShardedIndex(Math.min(options.shards(), writers.size()));
        this.salts = options.mixCacheSalt() ? new CacheSalts() : null;
    }

    public String modelName() {
        return modelName;
    }

    public String tenantId() {
        return tenantId;
    }

    public int blockSize() {
        return blockSize;
    }

    /**
     * Enqueues a batch's engine events for one worker, in order. Token hashing happens on the calling thread (the
     * listener's), not under the index lock. Never throws for bad events: they are counted by status.
     */
    public void submit(WorkerKey worker, List<KvEvent> events) {
        submitOps(worker, convert(worker, events));
    }

    private List<IndexOp> convert(WorkerKey worker, List<KvEvent> events) {
        List<IndexOp> ops = new ArrayList<>(events.size());
        for (KvEvent event : events) {
            if (salts != null && event instanceof BlockStored stored) {
                ops.add(StoredChainConverter.convert(stored, blockSize, salts.forStore(worker, stored)));
                continue;
            }
            if (salts != null && event instanceof AllBlocksCleared) {
                salts.forget(worker);
            }
            ops.add(StoredChainConverter.convert(event, blockSize));
        }
        return ops;
    }

    /**
     * Like {@link #submit(WorkerKey, List)}; {@code applied} then runs on the same writer thread once they are
     * applied (the listeners count what waits unapplied against their byte budget). When applying them fails, the
     * worker's blocks are dropped ({@link #applyOrDrop}) and {@code failed} hears why, before {@code applied} runs.
     */
    public void submit(WorkerKey worker, List<KvEvent> events, Runnable applied, Consumer<Throwable> failed) {
        List<IndexOp> ops = convert(worker, events);
        int thread = threadOf(worker.instanceId());
        // one writer task for the batch and its release: one queue hand-off (and wake-up) per batch, not two
        writers.executeOn(thread, () -> {
            try {
                if (!ops.isEmpty()) {
                    applyOrDrop(thread, worker, ops, failed);
                }
            } finally {
                applied.run();
            }
        });
    }

    /**
     * Enqueues ready-made operations for one worker, applied in order (recovery and benchmarks use this); if applying
     * them fails, the worker's blocks are dropped as for {@link #submit(WorkerKey, List, Runnable, Consumer)} and the
     * index's {@link FailedWrite} hook hears of it.
     */
    public void submitOps(WorkerKey worker, List<IndexOp> ops) {
        if (!ops.isEmpty()) {
            int thread = threadOf(worker.instanceId());
            writers.executeOn(thread, () -> applyOrDrop(thread, worker, ops, null));
        }
    }

    /**
     * {@link #submitOps} of recovered stores (blocks given back to a worker after {@code --unregister-grace}) whose
     * blocks start their time at their last store in {@code times}, not at their arrival.
     */
    public void submitRecovered(WorkerKey worker, List<IndexOp> ops, StoreTimes times, List<SaltedBlocks> salted) {
        salted.forEach(s -> restoreCacheSalts(worker, s.salt(), s.blockHashes()));
        boolean timed = observer != null && !times.isEmpty() && !ops.isEmpty();
        if (timed) {
            observer.recoveredStores(this, times);
        }
        submitOps(worker, ops);
        if (timed) {
            flush().thenRun(() -> observer.recoveredStoresApplied(this, times));
        }
    }

    /**
     * Recovery's staging into a {@link Indexers#detached} index, which nothing else writes or reads until
     * {@link #adopt}: each shard applies the records' owners of its workers on its first writer thread, so one thread
     * per shard applies the whole dump instead of every writer thread taking turns on the shard's lock (with one
     * shard, the default, four threads did, and each hand-over moved the tables' cache lines to the other core).
     * Batches are applied in the order they are staged.
     */
    public void stageRecords(DumpRecords records) {
        ShardedIndex ix = index;
        if (ix.size() == 1) {
            writers.executeOn(0, () -> ix.shard(0).load(records, null, 0));
            return;
        }
        int[] shardOfRef = new int[records.workers().length];
        boolean[] used = new boolean[ix.size()];
        for (int ref = 0; ref < shardOfRef.length; ref++) {
            shardOfRef[ref] = ix.shardOf(writers.threadOf(records.workers()[ref].instanceId()));
            used[shardOfRef[ref]] = true;
        }
        for (int shard = 0; shard < used.length; shard++) {
            if (used[shard]) {
                int s = shard; // a shard's first thread is the shard's own number (thread % shards == shard)
                writers.executeOn(s, () -> ix.shard(s).load(records, shardOfRef, s));
            }
        }
    }

    /**
     * Before {@link #stageRecords}: the dump holds about {@code blocks} blocks, so an index of one shard sizes its
     * block-hash table for them once instead of growing it while it stages ({@link NodeStore#expectBlocks}). With
     * more shards each holds an unknown part of them, and the tables grow as they do for live writes.
     */
    public void expectBlocks(long blocks) {
        ShardedIndex ix = index;
        if (ix.size() == 1 && blocks > 0) {
            int n = (int) Math.min(blocks, Integer.MAX_VALUE);
            writers.executeOn(0, () -> ix.shard(0).expectBlocks(n));
        }
    }

    /**
     * Ends {@link #stageRecords}: each shard, on the thread that staged it, builds what queries need and staging
     * left out (its prefix table); must run before {@link #adopt} (flush in between).
     */
    public void finishStaging() {
        ShardedIndex ix = index;
        for (int shard = 0; shard < ix.size(); shard++) {
            int s = shard;
            writers.executeOn(s, () -> ix.shard(s).finishLoad());
        }
    }

    /**
     * Enqueues ops that are decided on the worker's writer thread when their turn comes, after every write submitted
     * before: what {@code due} returns then (possibly nothing) is applied at once, like {@link #submitOps} (a failure
     * reaches the same hook). Block expiry uses this, so a block stored again while its removal waited in the queue is
     * not removed.
     */
    public void submitWhenDue(WorkerKey worker, Supplier<List<IndexOp>> due) {
        int thread = threadOf(worker.instanceId());
        writers.executeOn(thread, () -> {
            List<IndexOp> ops = due.get();
            if (!ops.isEmpty()) {
                applyOrDrop(thread, worker, ops, null);
            }
        });
    }

    /**
     * The writer thread of an instance: always the same one (per-worker order). A write holds its shard's lock
     * throughout, so only as many threads as the index has shards write it (the others would queue on those locks:
     * with one shard, 1,024 engines' batches on 4 threads spent their time handing the lock over); which threads
     * those are depends on the index, so several indexes still use every writer thread.
     */
    private int threadOf(long instanceId) {
        int threads = writers.size();
        int shards = index.size();
        int thread = writers.threadOf(instanceId);
        if (shards >= threads) {
            return thread;
        }
        int lanes = threads / shards; // shard + shards * lane is a thread of that shard (thread % shards == shard)
        return thread % shards + shards * lane(lanes);
    }

    private int lane(int lanes) {
        return Math.floorMod(HashCommon.mix(modelName.hashCode() * 31 + tenantId.hashCode()), lanes);
    }

    /**
     * A write that throws may have applied part of its ops (a chain half stored, a removal half done), so the index
     * can no longer vouch for the worker's blocks: {@code failed} (null for a write no listener delivered: the index's
     * {@link FailedWrite} hook) hears of it (the listener stops saying exact), then they are dropped on this thread,
     * before the worker's next write, as an unrecoverable gap drops them. The failure is rethrown for the writers to
     * count and log; a drop that fails too is attached to it, never retried.
     */
    private void applyOrDrop(int thread, WorkerKey worker, List<IndexOp> ops, Consumer<Throwable> failed) {
        try {
            applyOn(thread, worker, ops);
        } catch (RuntimeException | Error e) {
            try {
                if (failed != null) {
                    failed.accept(e);
                } else {
                    unheard.accept(new FailedWrite(this, worker, e));
                }
            } finally {
                dropAfterFailure(thread, worker, e);
            }
            throw e;
        }
    }

    private void dropAfterFailure(int thread, WorkerKey worker, Throwable failure) {
        try {
            if (worker.equals(failingDrop)) {
                failingDrop = null;
                throw new IllegalStateException("injected failure of the drop after a failed write (test seam)");
            }
            ShardedIndex ix = index;
            dropWorker(ix.shard(ix.shardOf(thread)), worker);
        } catch (RuntimeException | Error dropFailed) {
            failure.addSuppressed(dropFailed);
        }
    }

    private void applyOn(int thread, WorkerKey worker, List<IndexOp> ops) {
        WriteFault f = fault;
        if (f != null && f.worker().equals(worker)) {
            fault = null;
            failingDrop = f.dropFails() ? worker : null;
            if (f.afterOps() > 0) {
                applyOn(thread, worker, ops.subList(0, Math.min(f.afterOps(), ops.size())));
            }
            throw new IllegalStateException("injected write failure after " + f.afterOps() + " ops (test seam)");
        }
        ShardedIndex ix = index;
        int shard = ix.shardOf(thread);
        ApplyStatus[] statuses = observer == null ? null : new ApplyStatus[ops.size()];
        ix.shard(shard).apply(worker, ops, ix.knownElsewhere(shard, ops), statuses);
        if (observer != null) {
            observer.applied(this, worker, ops, statuses);
        }
    }

    /**
     * Test seam: the next write of {@code worker} applies its first {@code afterOps} ops and then throws, as a bug
     * in the index half-way through a batch would; with {@code dropFails}, dropping the worker's blocks after it
     * throws too.
     */
    void failNextWrite(WorkerKey worker, int afterOps, boolean dropFails) {
        fault = new WriteFault(worker, afterOps, dropFails);
    }

    /**
     * Recovery: takes over the content of {@code staged}, a detached index that recovery filled and flushed. While
     * this index holds nothing (the startup gate keeps listener batches out until recovery has finished) the
     * staged structure simply becomes this one's, in O(1); otherwise its memberships are submitted here as
     * recovered stores, so nothing either side holds is lost.
     */
    public void adopt(ModelIndex staged) {
        adopt(staged, StoreTimes.NONE);
    }

    /**
     * {@link #adopt(ModelIndex)} with the last-store times the dump carried, which block expiry takes as the start of
     * each recovered block's time.
     */
    public void adopt(ModelIndex staged, StoreTimes times) {
        if (salts != null && staged.salts != null) {
            staged.salts.each(salts::remember);
        }
        synchronized (this) {
            // with an observer the memberships go through submitOps below, so it learns of each
            if (observer == null && index.isEmpty() && staged.index.size() == index.size()) {
                index = staged.index;
                return;
            }
        }
        Map<WorkerKey, List<IndexOp>> byWorker = new LinkedHashMap<>();
        staged.dump((worker, tier, hasParent, parentBlockHash, blockHash, localHash) -> byWorker.computeIfAbsent(
                        worker, w -> new ArrayList<>())
                .add(IndexOp.Store.recovered(
                        tier, hasParent, parentBlockHash, new long[] {blockHash}, new long[] {localHash})));
        boolean timed = observer != null && !times.isEmpty();
        if (timed) {
            observer.recoveredStores(this, times);
        }
        byWorker.forEach(this::submitOps);
        if (timed) {
            flush().thenRun(() -> observer.recoveredStoresApplied(this, times));
        }
    }

    /** The cache salts of its workers' salted blocks ({@link CacheSalts}); nothing without {@code --mix-cache-salt}. */
    public void cacheSalts(CacheSalts.Sink sink) {
        if (salts != null) {
            salts.each(sink);
        }
    }

    /** One worker's salted blocks, to keep with its detached blocks ({@code --unregister-grace}); empty without. */
    public List<SaltedBlocks> cacheSaltsOf(WorkerKey worker) {
        List<SaltedBlocks> out = new ArrayList<>();
        if (salts != null) {
            salts.each(worker, (w, salt, hashes) -> out.add(new SaltedBlocks(salt, hashes)));
        }
        return out;
    }

    /** Salts a snapshot or a peer's dump carried for this (staged) index; ignored without {@code --mix-cache-salt}. */
    public void restoreCacheSalts(WorkerKey worker, String salt, long[] blockHashes) {
        if (salts != null) {
            salts.remember(worker, salt, blockHashes);
        }
    }

    /** The last-store times block expiry keeps for this index's TTL tiers ({@link AppliedOps#lastStores}). */
    public void lastStores(StoreTimes.Sink sink) {
        if (observer != null) {
            observer.lastStores(this, sink);
        }
    }

    /** Removes every dp rank of an instance from every tier (ordered after that worker's pending events). */
    public CompletableFuture<Void> removeInstance(long instanceId) {
        if (salts != null) {
            salts.forgetInstance(instanceId);
        }
        return onWriter(instanceId, shard -> {
            shard.removeInstance(instanceId);
            if (observer != null) {
                observer.instanceRemoved(this, instanceId);
            }
        });
    }

    /** Removes one (instance, dp rank) from every tier; used by unregister of one rank and by publisher restarts. */
    public CompletableFuture<Void> removeWorker(WorkerKey worker) {
        if (salts != null) {
            salts.forget(worker);
        }
        return onWriter(worker.instanceId(), shard -> dropWorker(shard, worker));
    }

    private void dropWorker(PrefixIndex shard, WorkerKey worker) {
        shard.removeWorker(worker);
        if (observer != null) {
            observer.workerRemoved(this, worker);
        }
    }

    private CompletableFuture<Void> onWriter(long instanceId, Consumer<PrefixIndex> change) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        int thread = threadOf(instanceId);
        writers.executeOn(thread, () -> {
            try {
                ShardedIndex ix = index;
                change.accept(ix.shard(ix.shardOf(thread)));
                done.complete(null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
                throw e;
            }
        });
        return done;
    }

    /** Completes when every write submitted before this call has been applied. */
    public CompletableFuture<Void> flush() {
        return writers.barrier();
    }

    /** Local hashes of a query's tokens with this index's block size and seed rules. */
    public long[] localHashes(int[] tokens, String loraName, String cacheSalt) {
        return localHashes(IntBuffer.wrap(tokens), loraName, cacheSalt, false);
    }

    /**
     * The same for the tokens between the buffer's position and limit (a view of a request's bytes, say); over
     * EAGLE windows when {@code eagle}, as SGLang's EAGLE stores are hashed ({@link BlockHasher#window}).
     */
    public long[] localHashes(IntBuffer tokens, String loraName, String cacheSalt, boolean eagle) {
        return BlockHasher.localHashes(
                tokens, blockSize, eagle, BlockHasher.seed(loraName, cacheSalt, options.mixCacheSalt()));
    }

    /** Tiered match; sees every write applied before it began. */
    public MatchResult findMatches(long[] localHashes) {
        return index.findMatches(localHashes);
    }

    /** Every membership, in dump order (device tier first, parents before children). */
    public void dump(DumpSink sink) {
        index.dump(sink, null);
    }

    /** What runs between two chunks of a walk, where no lock is held: writing out what a chunk encoded, or waiting. */
    @FunctionalInterface
    public interface BetweenChunks {
        void run() throws IOException;
    }

    /**
     * {@link #dump(DumpSink)}, running {@code between} between two chunks of the walk, where it holds no lock: a
     * sink that writes (to a file) or must wait (for a slow reader) does it there, never inside {@link
     * DumpSink#block}, where the index's writers would wait with it. An I/O failure of {@code between}, or of the
     * sink (which reports it as an {@link UncheckedIOException}), comes out as the {@link IOException} it was;
     * anything else the walk throws is left to the caller.
     */
    public void dump(DumpSink sink, BetweenChunks between) throws IOException {
        try {
            index.dump(sink, () -> {
                try {
                    between.run();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** Chunked, read-locked walks for the console: blocks per worker and tier, the most shared prefixes. */
    public CacheSurvey survey() {
        return new CacheSurvey(index);
    }

    /** Counters and sizes for metrics; cheap to call at scrape time. */
    public IndexStats stats() {
        ShardedIndex ix = index;
        return new IndexStats(ix.blocks(), ix.memberships(), ix.counters().snapshot());
    }

    @Override
    public String toString() {
        return "ModelIndex[" + modelName + ":" + tenantId + ", block_size=" + blockSize + "]";
    }
}
