package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.ApplyCounters.EventType;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;

/**
 * The locked prefix index of one (model, tenant): block nodes keyed by block hash, memberships (worker, block,
 * tier) as owner codes on the nodes, and the rules for applying events (docs/adr/0001-prefix-index.md).
 *
 * <p>One read-write lock: writers (one writer thread per worker, see {@link IndexWriters}) apply the stores and
 * removes of a batch per acquisition; queries and dumps share the read lock, so a query sees every event applied
 * before it began and never half of one. Clears and worker removals scan the nodes in chunks, one acquisition per
 * chunk (see {@link #removeSlots}). Workers are interned to int slots ({@link WorkerSlots}); a membership is an
 * int code on the node ({@link MembershipCode}).
 */
final class PrefixIndex {

    private static final int DEVICE = StorageTier.DEVICE.ordinal();
    private static final int TIERS = MembershipCode.TIERS;
    /** nodes scanned per write-lock acquisition when removing a worker */
    private static final int SCAN_CHUNK = 16_384;

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final NodeStore nodes = new NodeStore();
    private final OwnerSets owners = nodes.owners();
    private final WorkerSlots slots = new WorkerSlots();
    private final ApplyCounters counters;

    private final long[] tierMemberships = new long[TIERS];
    private volatile long membershipCount;
    private volatile int blockCount;
    /** bumped by every write-lock release: a cached cross-shard figure is still exact while it is unchanged */
    private volatile long version;

    PrefixIndex(ApplyCounters counters) {
        this.counters = counters;
    }

    long memberships() {
        return membershipCount;
    }

    int blocks() {
        return blockCount;
    }

    // ---- writes ----------------------------------------------------------------------------------------------

    /**
     * Applies one worker's ops in order: consecutive stores and removes under one write-lock acquisition, a clear
     * as a chunked scan (see {@link #removeSlots}). {@code known} holds blocks other shards hold that this one does
     * not, so a hash-only store ({@link IndexOp.Store#knownBlocksOnly}) can join them here (resolved before, off this
     * lock; {@link KnownBlocks#NONE} with one shard). When {@code statuses} is not null, each op's status goes into it.
     */
    void apply(WorkerKey worker, List<? extends IndexOp> ops, KnownBlocks known, ApplyStatus[] statuses) {
        int i = 0;
        while (i < ops.size()) {
            if (ops.get(i) instanceof IndexOp.Clear) {
                removeSlots(worker.instanceId(), worker.dpRank(), false);
                counters.count(EventType.CLEARED, ApplyStatus.OK);
                if (statuses != null) {
                    statuses[i] = ApplyStatus.OK;
                }
                i++;
                continue;
            }
            lock.writeLock().lock();
            try {
                for (; i < ops.size() && !(ops.get(i) instanceof IndexOp.Clear); i++) {
                    ApplyStatus status;
                    switch (ops.get(i)) {
                        case IndexOp.Store s -> counters.count(EventType.STORED, status = store(worker, s, known));
                        case IndexOp.Remove r -> counters.count(EventType.REMOVED, status = remove(worker, r));
                        case IndexOp.Clear c -> throw new IllegalStateException("clears are applied above");
                    }
                    if (statuses != null) {
                        statuses[i] = status;
                    }
                }
            } finally {
                publishSizes();
                lock.writeLock().unlock();
            }
        }
    }

    /**
     * Recovery's staging ({@link ModelIndex#stageRecords}): applies dump records in order under one write-lock
     * acquisition (see {@link RecordLoad}). The first load into an empty shard leaves its prefix table to
     * {@link #finishLoad} ({@link NodeStore#deferPrefixes}): nothing queries a staged index.
     */
    void load(DumpRecords records, int[] shardOfRef, int shard) {
        lock.writeLock().lock();
        try {
            nodes.deferPrefixes();
            new RecordLoad(nodes, slots, counters, tierMemberships).apply(records, shardOfRef, shard);
            nodes.gatherStaged();
        } finally {
            publishSizes();
            lock.writeLock().unlock();
        }
    }

    /** See {@link ModelIndex#expectBlocks}. */
    void expectBlocks(int blocks) {
        lock.writeLock().lock();
        try {
            nodes.expectBlocks(blocks);
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Ends recovery's staging: the loaded nodes enter the prefix table, which queries probe. */
    void finishLoad() {
        lock.writeLock().lock();
        try {
            nodes.indexPrefixes();
        } finally {
            lock.writeLock().unlock();
        }
    }

    /** Removes every dp rank of an instance, on every tier. */
    void removeInstance(long instanceId) {
        removeSlots(instanceId, 0, true);
    }

    /** Removes one (instance, dp rank), on every tier. */
    void removeWorker(WorkerKey worker) {
        removeSlots(worker.instanceId(), worker.dpRank(), false);
    }

    private ApplyStatus store(WorkerKey worker, IndexOp.Store op, KnownBlocks known) {
        long[] blockHashes = op.blockHashes();
        if (blockHashes.length == 0) {
            return op.conversionStatus();
        }
        int tier = op.tier().ordinal();
        // the node before the next block (NONE: none in this shard); the first block's parent found once, here
        int previous = op.hasParent() ? nodes.findByBlockHash(op.parentBlockHash()) : NodeStore.NONE;
        if (tier == DEVICE && op.hasParent() && !op.parentOptional()) {
            int slot = slots.slotOf(worker);
            int parent = previous;
            if (slot == WorkerSlots.NONE
                    || parent == NodeStore.NONE
                    || !owners.contains(parent, MembershipCode.of(slot, DEVICE))) {
                return ApplyStatus.PARENT_BLOCK_NOT_FOUND;
            }
        }
        int slot = slots.intern(worker);
        int code = MembershipCode.of(slot, tier);
        boolean rooted = !op.hasParent() || previous != NodeStore.NONE && nodes.isResolved(previous);
        nodes.prefetchSlots(
                blockHashes,
                op.localHashes(),
                0,
                blockHashes.length,
                rooted,
                !rooted ? 0 : op.hasParent() ? nodes.prefix(previous) : ContentPrefix.ROOT);
        boolean changed = false;
        boolean hasParent = op.hasParent();
        long parent = op.parentBlockHash();
        long[] localHashes = op.localHashes();
        boolean unknownBlocks = false;
        for (int i = 0; i < blockHashes.length; i++) {
            int node = nodes.findToCreate(blockHashes[i]);
            if (node == NodeStore.NONE && op.knownBlocksOnly()) {
                KnownBlocks.Block elsewhere = known.get(blockHashes[i]);
                if (elsewhere == null) {
                    unknownBlocks = true; // a hash-only store cannot vouch for a block no engine store made known
                    hasParent = true;
                    parent = blockHashes[i];
                    previous = NodeStore.NONE;
                    continue;
                }
                int parentHere = elsewhere.hasParent() && elsewhere.parentBlockHash() == parent && hasParent
                        ? previous
                        : elsewhere.hasParent() ? nodes.findByBlockHash(elsewhere.parentBlockHash()) : NodeStore.NONE;
                node = nodes.create(
                        blockHashes[i],
                        elsewhere.hasParent(),
                        elsewhere.parentBlockHash(),
                        elsewhere.localHash(),
                        parentHere);
            }
            if (node == NodeStore.NONE) {
                // a block's parent and local hash are fixed by the first store that creates it
                node = nodes.create(blockHashes[i], hasParent, parent, localHashes[i], previous);
            }
            if (owners.add(node, code)) {
                changed = true;
                slots.addMembership(slot);
                tierMemberships[tier]++;
            }
            hasParent = true;
            parent = blockHashes[i];
            previous = node;
        }
        slots.releaseIfEmpty(slot);
        if (op.conversionStatus() != ApplyStatus.OK) {
            return op.conversionStatus();
        }
        if (unknownBlocks) {
            return ApplyStatus.UNKNOWN_STORAGE_BLOCK;
        }
        return changed ? ApplyStatus.OK : ApplyStatus.DUPLICATE_STORE;
    }

    private ApplyStatus remove(WorkerKey worker, IndexOp.Remove op) {
        int slot = slots.slotOf(worker);
        if (slot == WorkerSlots.NONE) {
            return op.blockHashes().length == 0 ? ApplyStatus.OK : ApplyStatus.BLOCK_NOT_FOUND;
        }
        int tier = op.tier().ordinal();
        int code = MembershipCode.of(slot, tier);
        boolean missing = false;
        nodes.prefetchRemove(op.blockHashes());
        for (long blockHash : op.blockHashes()) {
            int node = nodes.findByBlockHash(blockHash);
            if (node == NodeStore.NONE || !owners.remove(node, code)) {
                missing = true;
                continue;
            }
            slots.removeMembership(slot);
            tierMemberships[tier]--;
            if (owners.count(node) == 0) {
                nodes.free(node);
            }
        }
        slots.releaseIfEmpty(slot);
        return missing ? ApplyStatus.BLOCK_NOT_FOUND : ApplyStatus.OK;
    }

    /**
     * Drops the memberships of one (instance, rank), or of every rank when {@code allRanks}, on every tier.
     *
     * <p>There is no per-worker reverse map (it would cost several bytes per membership), so this scans every
     * node. The scan takes the write lock per chunk of {@value #SCAN_CHUNK} nodes, so queries are never stalled for
     * the whole scan (tens of ms per million blocks); a query in between sees the worker partly removed. That is
     * safe: the doomed workers cannot gain memberships meanwhile, because their events and recovered events run on
     * this same writer thread (sticky by instance id), which is busy here.
     */
    private void removeSlots(long instanceId, int dpRank, boolean allRanks) {
        boolean[] doomed;
        lock.writeLock().lock();
        try {
            doomed = slots.slotsOf(instanceId, dpRank, allRanks);
            if (doomed == null) {
                return;
            }
        } finally {
            lock.writeLock().unlock();
        }
        long[] removed = new long[TIERS];
        for (int start = 0; ; start += SCAN_CHUNK) {
            lock.writeLock().lock();
            try {
                int end = Math.min(nodes.highWater(), start + SCAN_CHUNK);
                if (start >= end) {
                    // every node scanned: the doomed slots hold nothing any more
                    for (int s = 0; s < doomed.length; s++) {
                        if (doomed[s]) {
                            slots.release(s);
                        }
                    }
                    return;
                }
                for (int node = start; node < end; node++) {
                    if (nodes.isLive(node)) {
                        owners.removeSlots(node, doomed, removed);
                        if (owners.count(node) == 0) {
                            nodes.free(node);
                        }
                    }
                }
                for (int t = 0; t < TIERS; t++) {
                    tierMemberships[t] -= removed[t];
                    removed[t] = 0;
                }
            } finally {
                publishSizes();
                lock.writeLock().unlock();
            }
        }
    }

    long version() {
        return version;
    }

    private void publishSizes() {
        version++; // under the write lock: every caller holds it
        long total = 0;
        for (long m : tierMemberships) {
            total += m;
        }
        membershipCount = total;
        blockCount = nodes.liveCount();
    }

    // ---- for the cross-shard reads of ShardedIndex ----------------------------------------------------------

    /** This shard's record of a block, or null when it holds none with that hash. */
    KnownBlocks.Block block(long blockHash) {
        lock.readLock().lock();
        try {
            int node = nodes.findByBlockHash(blockHash);
            return node == NodeStore.NONE
                    ? null
                    : new KnownBlocks.Block(nodes.hasParent(node), nodes.parentBlockHash(node), nodes.localHash(node));
        } finally {
            lock.readLock().unlock();
        }
    }

    /** Sets {@code held[i]} for each of {@code blockHashes[0, n)} this shard holds (leaves the others as they are). */
    void markHeld(long[] blockHashes, int n, boolean[] held) {
        lock.readLock().lock();
        try {
            for (int i = 0; i < n; i++) {
                if (!held[i] && nodes.findByBlockHash(blockHashes[i]) != NodeStore.NONE) {
                    held[i] = true;
                }
            }
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Copies the block hashes of the live nodes with ids in [start, start + out.length) into {@code out}; returns
     * how many, or -1 when start is past the last node.
     */
    int blockHashes(int start, long[] out) {
        lock.readLock().lock();
        try {
            int end = Math.min(nodes.highWater(), start + out.length);
            if (start >= end) {
                return -1;
            }
            int n = 0;
            for (int node = start; node < end; node++) {
                if (nodes.isLive(node)) {
                    out[n++] = nodes.blockHash(node);
                }
            }
            return n;
        } finally {
            lock.readLock().unlock();
        }
    }

    // ---- for CacheSurvey's walks (the console's /stats and /prefixes): the lock stays in here ---------------

    /** Reads one chunk of node ids, {@code [start, end)}, through a view valid only during the call. */
    @FunctionalInterface
    interface ChunkVisitor {
        void visit(NodeView nodes, int start, int end);
    }

    /** Runs {@code reader} under one read-lock acquisition on a view of this shard that is valid only meanwhile. */
    <T> T read(Function<NodeView, T> reader) {
        lock.readLock().lock();
        try {
            return reader.apply(new NodeView(nodes, slots));
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Visits node ids {@code [0, size)} in chunks of {@code chunk}, each under its own read-lock acquisition, so
     * writers and queries wait at most one chunk; each chunk is clamped to the ids that exist.
     */
    void visitNodes(int size, int chunk, ChunkVisitor visitor) {
        for (int start = 0; start < size; start += chunk) {
            int from = start;
            read(view -> {
                visitor.visit(view, from, Math.min(Math.min(size, from + chunk), view.nodeIdBound()));
                return null;
            });
        }
    }

    // ---- reads -----------------------------------------------------------------------------------------------

    MatchResult findMatches(long[] localHashes) {
        lock.readLock().lock();
        try {
            boolean[] tierHasMembers = new boolean[TIERS];
            for (int t = 0; t < TIERS; t++) {
                tierHasMembers[t] = tierMemberships[t] > 0;
            }
            SlotRuns runs = PrefixMatcher.match(nodes, localHashes, slots.highWater(), tierHasMembers);
            if (runs == null) {
                return MatchResult.empty();
            }
            return MatchResult.of(runs, slots);
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * The memberships of one tier, one {@link DumpSink#block} call each, a parent always before its children
     * ({@link ShardedIndex#dump} goes tier by tier). The walk takes the read lock per chunk of
     * {@value DumpWalk#CHUNK} nodes, so a writer never waits for the whole dump; the result may mix the moments
     * between chunks, which the "at least" cut allows (see {@link DumpWalk}).
     */
    void dump(StorageTier storageTier, DumpSink out) {
        dump(storageTier, out, DumpWalk.CHUNK, null);
    }

    /** {@link #dump(StorageTier, DumpSink)} in chunks of {@code chunk} nodes, running {@code between} (if not null)
     * between chunks, without the lock: tests write there. */
    void dump(StorageTier storageTier, DumpSink out, int chunk, Runnable between) {
        DumpWalk walk;
        lock.readLock().lock();
        try {
            if (tierMemberships[storageTier.ordinal()] == 0) {
                return;
            }
            walk = new DumpWalk(storageTier, nodes.highWater());
        } finally {
            lock.readLock().unlock();
        }
        while (!walk.finished()) {
            lock.readLock().lock();
            try {
                walk.step(nodes, slots, out, chunk);
            } finally {
                lock.readLock().unlock();
            }
            if (between != null && !walk.finished()) {
                between.run();
            }
        }
    }
}
