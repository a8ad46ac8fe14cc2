package io.kvindexer.indexer.index;

import io.kvindexer.indexer.index.ApplyCounters.EventType;
import java.util.Arrays;

/**
 * Recovery's staging of one frame of dump records into a shard ({@link PrefixIndex#load}, under its write lock):
 * the owners whose worker ref maps to {@code shard} in {@code shardOfRef} (all of them when it is null), each as a
 * recovered store of its one block would be (the parent need not be held; a block that is its own parent stores
 * nothing). One find per record rather than one per owner, and none for the parent of a record whose parent is the
 * record before it.
 */
final class RecordLoad {

    /** records whose loads {@link #prefetchRun} issues together */
    private static final int PREFETCH_RUN = 64;

    private final NodeStore nodes;
    private final OwnerSets owners;
    private final WorkerSlots slots;
    private final ApplyCounters counters;
    private final long[] tierMemberships;

    RecordLoad(NodeStore nodes, WorkerSlots slots, ApplyCounters counters, long[] tierMemberships) {
        this.nodes = nodes;
        this.owners = nodes.owners();
        this.slots = slots;
        this.counters = counters;
        this.tierMemberships = tierMemberships;
    }

    void apply(DumpRecords records, int[] shardOfRef, int shard) {
        int[] slotOfRef = new int[records.workers().length];
        Arrays.fill(slotOfRef, WorkerSlots.NONE);
        try {
            int previous = NodeStore.NONE; // the node of the record before, when this shard has it
            for (int i = 0; i < records.count(); ) {
                int to = prefetchRun(records, i);
                previous = loadRun(records, i, to, previous, shardOfRef, shard, slotOfRef);
                i = to;
            }
        } finally {
            for (int slot : slotOfRef) {
                if (slot != WorkerSlots.NONE) {
                    slots.releaseIfEmpty(slot);
                }
            }
        }
    }

    /**
     * Applies records {@code [from, to)} (see {@link #apply}); returns the last one's node, or NONE. A method per run
     * rather than one loop over the frame, so that a cold replica gets it compiled after a few hundred runs instead
     * of waiting for the frame loop's on-stack replacement.
     */
    private int loadRun(
            DumpRecords records, int from, int to, int previous, int[] shardOfRef, int shard, int[] slotOfRef) {
        long[] blockHashes = records.blockHashes();
        int[] ownersEnd = records.ownersEnd();
        int[] codes = records.ownerCodes();
        for (int i = from; i < to; i++) {
            int first = i == 0 ? 0 : ownersEnd[i - 1];
            long blockHash = blockHashes[i];
            boolean hasParent = records.hasParent()[i];
            long parent = records.parentBlockHashes()[i];
            int node = NodeStore.NONE;
            if (hasParent && parent == blockHash) {
                counters.count(EventType.STORED, ApplyStatus.INVALID_BLOCK);
            } else if (holdsAny(codes, first, ownersEnd[i], shardOfRef, shard)) {
                node = nodes.findToCreate(blockHash);
                if (node == NodeStore.NONE) {
                    int parentNode = !hasParent
                            ? NodeStore.NONE
                            : previous != NodeStore.NONE && parent == blockHashes[i - 1]
                                    ? previous
                                    : nodes.findByBlockHash(parent);
                    node = nodes.create(blockHash, hasParent, parent, records.localHashes()[i], parentNode);
                }
                boolean changed = false;
                for (int k = first; k < ownersEnd[i]; k++) {
                    int ref = MembershipCode.slot(codes[k]);
                    if (shardOfRef != null && shardOfRef[ref] != shard) {
                        continue;
                    }
                    int slot = slotOfRef[ref];
                    if (slot == WorkerSlots.NONE) {
                        slot = slotOfRef[ref] = slots.intern(records.workers()[ref]);
                    }
                    int tier = MembershipCode.tier(codes[k]);
                    if (owners.add(node, MembershipCode.of(slot, tier))) {
                        changed = true;
                        slots.addMembership(slot);
                        tierMemberships[tier]++;
                    }
                }
                counters.count(EventType.STORED, changed ? ApplyStatus.OK : ApplyStatus.DUPLICATE_STORE);
            }
            previous = node;
        }
        return previous;
    }

    /**
     * Issues the block-hash table loads of the run of records from {@code from} on that each have the record before
     * as parent (at most {@value #PREFETCH_RUN}), together ({@link NodeStore#prefetch}); returns where the run ends.
     * No prefix slots: a staged store fills its prefix table only at the end ({@link NodeStore#deferPrefixes}).
     */
    private int prefetchRun(DumpRecords records, int from) {
        long[] blockHashes = records.blockHashes();
        int to = from + 1;
        int end = Math.min(records.count(), from + PREFETCH_RUN);
        while (to < end && records.hasParent()[to] && records.parentBlockHashes()[to] == blockHashes[to - 1]) {
            to++;
        }
        nodes.prefetch(blockHashes, from, to);
        return to;
    }

    private static boolean holdsAny(int[] codes, int from, int to, int[] shardOfRef, int shard) {
        if (shardOfRef == null) {
            return true;
        }
        for (int k = from; k < to; k++) {
            if (shardOfRef[MembershipCode.slot(codes[k])] == shard) {
                return true;
            }
        }
        return false;
    }
}
