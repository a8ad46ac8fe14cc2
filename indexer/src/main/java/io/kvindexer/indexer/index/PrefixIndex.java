package io.kvindexer.indexer.index;

import io.kvindexer.indexer.model.WorkerKey;

import io.kvindexer.indexer.event.RouterEvent;
import io.kvindexer.indexer.model.StorageTier;
import io.kvindexer.indexer.index.ApplyCounters.EventType;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.objects.Object2IntOpenHashMap;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The locked prefix index of one (model, tenant): block nodes keyed by sequence hash, memberships
 * (worker, block, tier) as owner codes on the nodes, and the rules of design §2 for applying events.
 *
 * <p>One read-write lock: writers (one writer thread per worker, see {@link IndexWriters}) apply the stores and
 * removes of a batch per acquisition; queries and dumps share the read lock, so a query sees every event applied
 * before it began and never half of one. Clears and worker removals scan the nodes in chunks, one acquisition per
 * chunk (see {@link #removeSlots}). Workers are interned to int slots; a membership is the int
 * {@code slot << 2 | tier}.
 */
final class PrefixIndex {

    private static final int DEVICE = StorageTier.DEVICE.ordinal();
    private static final int TIERS = StorageTier.values().length;
    /** nodes scanned per write-lock acquisition when removing a worker */
    private static final int SCAN_CHUNK = 16_384;

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final NodeStore nodes = new NodeStore();
    private final ApplyCounters counters;

    private final Object2IntOpenHashMap<WorkerKey> slotOf = new Object2IntOpenHashMap<>();
    private WorkerKey[] workerOfSlot = new WorkerKey[16];
    /** memberships held per slot; a slot is released when its count drops to zero */
    private long[] slotMemberships = new long[16];
    private int slotHighWater;
    private volatile int[] slotOrder;
    private final IntArrayList freeSlots = new IntArrayList();

    private final long[] tierMemberships = new long[TIERS];
    private volatile long membershipCount;
    private volatile int blockCount;

    PrefixIndex(ApplyCounters counters) {
        this.counters = counters;
        slotOf.defaultReturnValue(-1);
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
     * as a chunked scan (see {@link #removeSlots}).
     */
    void apply(WorkerKey worker, List<? extends IndexOp> ops) {
        int i = 0;
        while (i < ops.size()) {
            if (ops.get(i) instanceof IndexOp.Clear) {
                removeSlots(worker.instanceId(), worker.dpRank(), false);
                counters.count(EventType.CLEARED, ApplyStatus.OK);
                i++;
                continue;
            }
            lock.writeLock().lock();
            try {
                for (; i < ops.size() && !(ops.get(i) instanceof IndexOp.Clear); i++) {
                    switch (ops.get(i)) {
                        case IndexOp.Store s -> counters.count(EventType.STORED, store(worker, s));
                        case IndexOp.Remove r -> counters.count(EventType.REMOVED, remove(worker, r));
                        case IndexOp.Clear c -> throw new IllegalStateException("clears are applied above");
                    }
                }
            } finally {
                publishSizes();
                lock.writeLock().unlock();
            }
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

    private ApplyStatus store(WorkerKey worker, IndexOp.Store op) {
        long[] seqHashes = op.seqHashes();
        if (seqHashes.length == 0) {
            return op.conversionStatus();
        }
        int tier = op.tier().ordinal();
        if (tier == DEVICE && op.hasParent() && !op.parentOptional()) {
            int slot = slotOf.getInt(worker);
            int parent = nodes.findBySeq(op.parentSeqHash());
            if (slot < 0 || parent == NodeStore.NONE || !nodes.hasOwner(parent, code(slot, DEVICE))) {
                return ApplyStatus.PARENT_BLOCK_NOT_FOUND;
            }
        }
        int slot = slotFor(worker);
        int code = code(slot, tier);
        boolean changed = false;
        boolean hasParent = op.hasParent();
        long parent = op.parentSeqHash();
        long[] localHashes = op.localHashes();
        for (int i = 0; i < seqHashes.length; i++) {
            int node = nodes.findBySeq(seqHashes[i]);
            if (node == NodeStore.NONE) {
                // a block's parent and local hash are fixed by the first store that creates it
                node = nodes.create(seqHashes[i], hasParent, parent, localHashes[i]);
            }
            if (nodes.addOwner(node, code)) {
                changed = true;
                slotMemberships[slot]++;
                tierMemberships[tier]++;
            }
            hasParent = true;
            parent = seqHashes[i];
        }
        if (slotMemberships[slot] == 0) {
            releaseSlot(slot);
        }
        if (op.conversionStatus() != ApplyStatus.OK) {
            return op.conversionStatus();
        }
        return changed ? ApplyStatus.OK : ApplyStatus.DUPLICATE_STORE;
    }

    private ApplyStatus remove(WorkerKey worker, IndexOp.Remove op) {
        int slot = slotOf.getInt(worker);
        if (slot < 0) {
            return op.seqHashes().length == 0 ? ApplyStatus.OK : ApplyStatus.BLOCK_NOT_FOUND;
        }
        int tier = op.tier().ordinal();
        int code = code(slot, tier);
        boolean missing = false;
        for (long seq : op.seqHashes()) {
            int node = nodes.findBySeq(seq);
            if (node == NodeStore.NONE || !nodes.removeOwner(node, code)) {
                missing = true;
                continue;
            }
            slotMemberships[slot]--;
            tierMemberships[tier]--;
            if (nodes.ownerCount(node) == 0) {
                nodes.free(node);
            }
        }
        if (slotMemberships[slot] == 0) {
            releaseSlot(slot);
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
        lock.writeLock().lock();
        try {
            doomed = new boolean[slotHighWater];
            boolean anyHeld = false;
            for (int s = 0; s < slotHighWater; s++) {
                WorkerKey w = workerOfSlot[s];
                if (w != null && w.instanceId() == instanceId && (allRanks || w.dpRank() == dpRank)) {
                    doomed[s] = true;
                    anyHeld = true;
                }
            }
            if (!anyHeld) {
                return;
            }
        } finally {
            lock.writeLock().unlock();
        }
        for (int start = 0; ; start += SCAN_CHUNK) {
            lock.writeLock().lock();
            try {
                int end = Math.min(nodes.highWater(), start + SCAN_CHUNK);
                if (start >= end) {
                    // every node scanned: the doomed slots hold nothing any more
                    for (int s = 0; s < doomed.length; s++) {
                        if (doomed[s]) {
                            slotMemberships[s] = 0;
                            releaseSlot(s);
                        }
                    }
                    return;
                }
                for (int node = start; node < end; node++) {
                    if (nodes.isLive(node)) {
                        removeDoomedOwners(node, doomed);
                    }
                }
            } finally {
                publishSizes();
                lock.writeLock().unlock();
            }
        }
    }

    private void removeDoomedOwners(int node, boolean[] doomed) {
        for (int o = nodes.ownerCount(node) - 1; o >= 0; o--) {
            int c = nodes.ownerAt(node, o);
            if ((c >>> 2) < doomed.length && doomed[c >>> 2]) {
                tierMemberships[c & 3]--;
                nodes.removeOwner(node, c);
            }
        }
        if (nodes.ownerCount(node) == 0) {
            nodes.free(node);
        }
    }

    private int slotFor(WorkerKey worker) {
        int slot = slotOf.getInt(worker);
        if (slot >= 0) {
            return slot;
        }
        int s;
        if (!freeSlots.isEmpty()) {
            s = freeSlots.popInt();
        } else {
            if (slotHighWater == workerOfSlot.length) {
                workerOfSlot = Arrays.copyOf(workerOfSlot, slotHighWater * 2);
                slotMemberships = Arrays.copyOf(slotMemberships, slotHighWater * 2);
            }
            s = slotHighWater++;
        }
        workerOfSlot[s] = worker;
        slotOrder = null;
        slotMemberships[s] = 0;
        slotOf.put(worker, s);
        return s;
    }

    private void releaseSlot(int slot) {
        WorkerKey w = workerOfSlot[slot];
        if (w != null) {
            slotOf.removeInt(w);
            workerOfSlot[slot] = null;
            freeSlots.add(slot);
            slotOrder = null;
        }
    }

    private static int code(int slot, int tier) {
        return slot << 2 | tier;
    }

    private void publishSizes() {
        long total = 0;
        for (long m : tierMemberships) {
            total += m;
        }
        membershipCount = total;
        blockCount = nodes.liveCount();
    }

    // ---- for CacheSurvey's chunked, read-locked walks (the console's /stats and /prefixes) -------------------

    java.util.concurrent.locks.Lock readLock() {
        return lock.readLock();
    }

    NodeStore nodeStore() {
        return nodes;
    }

    /** The worker of an owner code's slot (read lock held), or null for a released slot. */
    WorkerKey workerOfCode(int code) {
        int slot = code >>> 2;
        return slot < slotHighWater ? workerOfSlot[slot] : null;
    }

    // ---- reads -----------------------------------------------------------------------------------------------

    MatchResult findMatches(long[] localHashes) {
        lock.readLock().lock();
        try {
            boolean[] tierHasMembers = new boolean[TIERS];
            for (int t = 0; t < TIERS; t++) {
                tierHasMembers[t] = tierMemberships[t] > 0;
            }
            int[][] runs = PrefixMatcher.match(nodes, localHashes, slotHighWater, tierHasMembers);
            if (runs == null) {
                return MatchResult.empty();
            }
            int matched = 0;
            for (int s = 0; s < slotHighWater; s++) {
                if (runs[2][s] > 0) {
                    matched++;
                }
            }
            MatchResult.WorkerMatch[] out = new MatchResult.WorkerMatch[matched];
            int k = 0;
            for (int s : slotsInWorkerOrder()) {
                if (runs[2][s] > 0) {
                    out[k++] = new MatchResult.WorkerMatch(workerOfSlot[s], runs[0][s], runs[1][s], runs[2][s]);
                }
            }
            return new MatchResult(Collections.unmodifiableList(Arrays.asList(out)));
        } finally {
            lock.readLock().unlock();
        }
    }

    /**
     * Live slots ordered by instance id, then dp rank (unsigned): results come out sorted without sorting per
     * query. Rebuilt lazily after a slot is taken or released (rare), under the write lock or, racing benignly
     * with another reader, under the read lock (both compute the same array).
     */
    private int[] slotsInWorkerOrder() {
        int[] order = slotOrder;
        if (order == null) {
            order = java.util.stream.IntStream.range(0, slotHighWater).filter(s -> workerOfSlot[s] != null).boxed()
                    .sorted(Comparator.comparing((Integer s) -> workerOfSlot[s].instanceId(), Long::compareUnsigned)
                            .thenComparing(s -> workerOfSlot[s].dpRank(), Integer::compareUnsigned))
                    .mapToInt(Integer::intValue).toArray();
            slotOrder = order;
        }
        return order;
    }

    /**
     * Every membership as a single-block Stored RouterEvent: the device tier first, then host-pinned, disk and
     * external; within a tier a parent always precedes its children. Event ids count from 0.
     */
    void dump(DumpSink out) {
        lock.readLock().lock();
        try {
            int[] chain = new int[64];
                        for (int tier = 0; tier < TIERS; tier++) {
                if (tierMemberships[tier] == 0) {
                    continue;
                }
                StorageTier storageTier = StorageTier.ofOrdinal(tier);
                boolean[] done = new boolean[nodes.highWater()];
                for (int node = 0, end = nodes.highWater(); node < end; node++) {
                    if (!nodes.isLive(node) || done[node]) {
                        continue;
                    }
                    // climb to the first ancestor already emitted (or missing), then emit downwards
                    int depth = 0;
                    for (int x = node; x != NodeStore.NONE && !done[x];
                         x = nodes.hasParent(x) ? nodes.findBySeq(nodes.parentSeqHash(x)) : NodeStore.NONE) {
                        done[x] = true;
                        if (depth == chain.length) {
                            chain = Arrays.copyOf(chain, depth * 2);
                        }
                        chain[depth++] = x;
                    }
                    for (int d = depth - 1; d >= 0; d--) {
                        emit(out, chain[d], tier, storageTier);
                    }
                }
            }
        } finally {
            lock.readLock().unlock();
        }
    }

    private void emit(DumpSink out, int node, int tier, StorageTier storageTier) {
        for (int o = 0, owners = nodes.ownerCount(node); o < owners; o++) {
            int c = nodes.ownerAt(node, o);
            if ((c & 3) != tier) {
                continue;
            }
            WorkerKey w = workerOfSlot[c >>> 2];
            out.block(w, storageTier, nodes.hasParent(node), nodes.parentSeqHash(node), nodes.seqHash(node),
                    nodes.localHash(node));
        }
    }
}
