package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.ApplyCounters.EventType;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * The locked prefix index of one (model, tenant): block nodes keyed by block hash, memberships (worker, block,
 * tier) as owner codes on the nodes, and the rules for applying events (docs/adr/0001-prefix-index.md).
 *
 * <p>One lock ({@link ShardLock}): writers (one writer thread per worker, see {@link IndexWriters}) apply the stores
 * and removes of a batch per acquisition; queries and dumps share its read side, so a query sees every event applied
 * before it began and never half of one. A writer lets a waiting query in between two events, between two blocks
 * of a store and before each node a remove frees, where the write's order keeps that true (see pausesInAWrite).
 * Clears and worker removals scan the nodes in chunks, one acquisition per chunk (see {@link #removeSlots}). Workers
 * are interned to int slots ({@link WorkerSlots}); a membership is an int code on the node ({@link MembershipCode}).
 */
final class PrefixIndex {

    private static final int DEVICE = StorageTier.DEVICE.ordinal();
    private static final int TIERS = MembershipCode.TIERS;
    /** nodes scanned per write-lock acquisition when removing a worker */
    private static final int SCAN_CHUNK = 16_384;

    private final ShardLock lock = new ShardLock();
    private final NodeStore nodes = new NodeStore();
    private final OwnerSets owners = nodes.owners();
    private final WorkerSlots slots = new WorkerSlots();
    private final ApplyCounters counters;

    private final long[] tierMemberships = new long[TIERS];
    private volatile long membershipCount;
    private volatile int blockCount;
    /** bumped by every write-lock release: a cached cross-shard figure is still exact while it is unchanged */
    private volatile long version;

    /**
     * A node per block of the event being applied: {@link #store}'s chain, {@link #remove}'s nodes left with no owner
     * (the writer's: writers are serialised by {@link ShardLock})
     */
    private int[] nodeScratch = new int[64];

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
            lock.lockWrite();
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
                    lock.letQueriesIn(); // between two events: every event so far whole
                }
            } finally {
                publishSizes();
                lock.unlockWrite();
            }
        }
    }

    /**
     * Recovery's staging ({@link ModelIndex#stageRecords}): applies dump records in order under one write-lock
     * acquisition (see {@link RecordLoad}). The first load into an empty shard leaves its prefix table to
     * {@link #finishLoad} ({@link NodeStore#deferPrefixes}): nothing queries a staged index.
     */
    void load(DumpRecords records, int[] shardOfRef, int shard) {
        lock.lockWrite();
        try {
            nodes.deferPrefixes();
            new RecordLoad(nodes, slots, counters, tierMemberships).apply(records, shardOfRef, shard);
            nodes.gatherStaged();
        } finally {
            publishSizes();
            lock.unlockWrite();
        }
    }

    /** See {@link ModelIndex#expectBlocks}. */
    void expectBlocks(int blocks) {
        lock.lockWrite();
        try {
            nodes.expectBlocks(blocks);
        } finally {
            lock.unlockWrite();
        }
    }

    /** Ends recovery's staging: the loaded nodes enter the prefix table, which queries probe. */
    void finishLoad() {
        lock.lockWrite();
        try {
            nodes.indexPrefixes();
        } finally {
            lock.unlockWrite();
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
        boolean hasParent = op.hasParent();
        long parent = op.parentBlockHash();
        long[] localHashes = op.localHashes();
        boolean unknownBlocks = false;
        boolean conflict = false;
        // an engine's device store vouches for its blocks' content: see sameContent
        boolean checksContent = tier == DEVICE && op.source() == IndexOp.Store.Source.ENGINE;
        int[] chain = nodeScratch(blockHashes.length);
        Arrays.fill(chain, 0, blockHashes.length, NodeStore.NONE);
        boolean changed = false;
        int created = NodeStore.NONE; // the last block this store created, whose next ids it keeps free
        try {
            // First every node, no owner added: a query let in here sees nodes no one holds, which change no answer
            // (an empty owner word intersects to nothing and breaks every run: its same-owners bit is clear).
            for (int i = 0; i < blockHashes.length; i++) {
                int node = nodes.findToCreate(blockHashes[i]);
                if (node != NodeStore.NONE && checksContent && !sameContent(node, hasParent, parent, localHashes[i])) {
                    conflict = true; // this block and the rest of the chain are not stored
                    break;
                }
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
                            : elsewhere.hasParent()
                                    ? nodes.findByBlockHash(elsewhere.parentBlockHash())
                                    : NodeStore.NONE;
                    node = nodes.create(
                            blockHashes[i],
                            elsewhere.hasParent(),
                            elsewhere.parentBlockHash(),
                            elsewhere.localHash(),
                            parentHere);
                } else if (node == NodeStore.NONE) {
                    // a block's parent and local hash are fixed by the first store that creates it
                    node = nodes.create(
                            blockHashes[i], hasParent, parent, localHashes[i], previous, blockHashes.length - i);
                    created = node;
                }
                chain[i] = node;
                hasParent = true;
                parent = blockHashes[i];
                previous = node;
                lock.letQueriesIn(); // see pausesInAWrite
            }
            if (created != NodeStore.NONE && created == chain[blockHashes.length - 1]) {
                nodes.keepNextFree(created); // the chain's next blocks (decode) in line with it
            }
            // Then the owners, tail first: see pausesInAWrite
            for (int i = blockHashes.length - 1; i >= 0; i--) {
                if (chain[i] != NodeStore.NONE && owners.add(chain[i], code)) {
                    changed = true;
                    slots.addMembership(slot);
                    tierMemberships[tier]++;
                    lock.letQueriesIn();
                }
            }
        } catch (RuntimeException | Error e) {
            freeUnheld(chain, blockHashes.length);
            throw e;
        }
        slots.releaseIfEmpty(slot);
        if (op.conversionStatus() != ApplyStatus.OK) {
            return op.conversionStatus();
        }
        if (unknownBlocks) {
            return ApplyStatus.UNKNOWN_STORAGE_BLOCK;
        }
        if (conflict) {
            return ApplyStatus.INVALID_BLOCK;
        }
        return changed ? ApplyStatus.OK : ApplyStatus.DUPLICATE_STORE;
    }

    /**
     * Whether a node made by an earlier store holds the content an engine's device store now gives its block hash.
     * Engines chain a block's hash over its parent and tokens, so one hash names one content; a store that gives it
     * other content (a publisher with counter hashes, hashes not chained, a 64-bit collision) must not join the
     * node: its worker would then be credited with tokens it never stored. Lower tiers and recovered stores are not
     * checked (an offloaded block may come without its parent; a peer's dump carries the nodes as they are).
     */
    private boolean sameContent(int node, boolean hasParent, long parent, long localHash) {
        return nodes.localHash(node) == localHash
                && nodes.hasParent(node) == hasParent
                && (!hasParent || nodes.parentBlockHash(node) == parent);
    }

    /*
     * pausesInAWrite: why a query let in at each of a write's pauses (ShardLock.letQueriesIn) sees this worker's
     * match as before the event or after it, never part of it, and a consistent index.
     * - Only queries are let in, only at these points: never between a find and its create (the create inserts at
     *   the slot the find ended on), never inside NodeStore or OwnerSets. A query writes nothing, so the writer's
     *   state across a pause (prefetched slots, the missed slot, chain) is as it left it; a pause costs only the
     *   lines the query evicts.
     * - After a create, before any owner: the node is in both tables or in line exactly as after the store (create
     *   did the sibling check, the line's bits, the orphans it resolved, its parent's next id), with the empty owner
     *   word. A walk may step into it (in line, or by probe) and finds no holder there; its same-owners bit is clear
     *   (both must be non-empty), so no run passes it. Orphans it resolved gain a path only through it, held by no
     *   one yet. No answer changes.
     * - After an owner add, tail first: the owner word and the same-owners bits of the node and the next id are
     *   refreshed together (OwnerSets.add), tierMemberships counts what the owner words hold. The worker holds, of
     *   this chain, what it held before plus a suffix [j, n). A walk reaches chain block i only through block i - 1
     *   (matching is parent-exact; with cumulative tiers "covered" on the walk's tiers): if the first block it did
     *   not cover before is below j, it stops there, as before the store; otherwise it covers the whole chain, as
     *   after. Adding head first would show a prefix of the chain: half of the event.
     * - A remove takes its owners off without a pause (its blocks come in no chain order, so a query between two
     *   would see half of it), then frees the nodes left with no owner, pausing before each: a node no one holds
     *   changes no answer (as after a create above), so a query let in there sees the whole remove. Freeing is most
     *   of a remove's time (table deletions, a next id leaving its line). Clears and worker removals keep their
     *   chunks; recovery's load takes the lock whole.
     */

    private int[] nodeScratch(int length) {
        if (nodeScratch.length < length) {
            nodeScratch = new int[Math.max(length, 2 * nodeScratch.length)];
        }
        return nodeScratch;
    }

    /**
     * A store that throws leaves no node without an owner behind (a node is live while it has one, and the failure
     * path's scan frees only live nodes): frees the chain's nodes it created and did not give one, newest first.
     */
    private void freeUnheld(int[] chain, int length) {
        for (int i = length - 1; i >= 0; i--) {
            int node = chain[i];
            if (node != NodeStore.NONE && owners.isEmpty(node)) {
                nodes.free(node);
                for (int k = 0; k <= i; k++) {
                    if (chain[k] == node) {
                        chain[k] = NodeStore.NONE; // a chain that names a block twice
                    }
                }
            }
        }
    }

    private ApplyStatus remove(WorkerKey worker, IndexOp.Remove op) {
        int slot = slots.slotOf(worker);
        if (slot == WorkerSlots.NONE) {
            return op.blockHashes().length == 0 ? ApplyStatus.OK : ApplyStatus.BLOCK_NOT_FOUND;
        }
        int tier = op.tier().ordinal();
        int code = MembershipCode.of(slot, tier);
        boolean missing = false;
        long[] blockHashes = op.blockHashes();
        nodes.prefetchRemove(blockHashes);
        int[] unheld = nodeScratch(blockHashes.length);
        int emptied = 0;
        for (long blockHash : blockHashes) {
            int node = nodes.findByBlockHash(blockHash);
            if (node == NodeStore.NONE || !owners.remove(node, code)) {
                missing = true;
                continue;
            }
            slots.removeMembership(slot);
            tierMemberships[tier]--;
            if (owners.count(node) == 0) {
                unheld[emptied++] = node;
            }
        }
        slots.releaseIfEmpty(slot);
        // Then the nodes no one holds now go, a query let in before each: see pausesInAWrite
        for (int i = 0; i < emptied; i++) {
            lock.letQueriesIn();
            nodes.free(unheld[i]);
        }
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
        lock.lockWrite();
        try {
            doomed = slots.slotsOf(instanceId, dpRank, allRanks);
            if (doomed == null) {
                return;
            }
        } finally {
            lock.unlockWrite();
        }
        long[] removed = new long[TIERS];
        for (int start = 0; ; start += SCAN_CHUNK) {
            lock.lockWrite();
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
                lock.unlockWrite();
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
        lock.lockRead();
        try {
            int node = nodes.findByBlockHash(blockHash);
            return node == NodeStore.NONE
                    ? null
                    : new KnownBlocks.Block(nodes.hasParent(node), nodes.parentBlockHash(node), nodes.localHash(node));
        } finally {
            lock.unlockRead();
        }
    }

    /** Sets {@code held[i]} for each of {@code blockHashes[0, n)} this shard holds (leaves the others as they are). */
    void markHeld(long[] blockHashes, int n, boolean[] held) {
        lock.lockRead();
        try {
            for (int i = 0; i < n; i++) {
                if (!held[i] && nodes.findByBlockHash(blockHashes[i]) != NodeStore.NONE) {
                    held[i] = true;
                }
            }
        } finally {
            lock.unlockRead();
        }
    }

    /**
     * Copies the block hashes of the live nodes with ids in [start, start + out.length) into {@code out}; returns
     * how many, or -1 when start is past the last node.
     */
    int blockHashes(int start, long[] out) {
        lock.lockRead();
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
            lock.unlockRead();
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
        lock.lockRead();
        try {
            return reader.apply(new NodeView(nodes, slots));
        } finally {
            lock.unlockRead();
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
        lock.lockQuery();
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
            lock.unlockQuery();
        }
    }

    /**
     * The memberships of one tier, one {@link DumpSink#block} call each, a parent always before its children
     * ({@link ShardedIndex#dump} goes tier by tier). The walk takes the read lock per chunk of {@code chunk} nodes
     * ({@value DumpWalk#CHUNK} outside tests), so a writer never waits for the whole dump; the result may mix the
     * moments between chunks, which the "at least" cut allows (see {@link DumpWalk}). {@code between} (if not null)
     * runs between two chunks, without the lock: a slow reader's wait, or a test's writes.
     */
    void dump(StorageTier storageTier, DumpSink out, int chunk, Runnable between) {
        DumpWalk walk;
        lock.lockRead();
        try {
            if (tierMemberships[storageTier.ordinal()] == 0) {
                return;
            }
            walk = new DumpWalk(storageTier, nodes.highWater());
        } finally {
            lock.unlockRead();
        }
        while (!walk.finished()) {
            lock.lockRead();
            try {
                walk.step(nodes, slots, out, chunk);
            } finally {
                lock.unlockRead();
            }
            if (between != null && !walk.finished()) {
                between.run();
            }
        }
    }
}
