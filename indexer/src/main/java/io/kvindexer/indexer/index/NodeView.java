package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.WorkerKey;
import java.util.List;

/**
 * What a {@link PrefixIndex.ChunkVisitor} may read of one shard: its nodes, their owners, and the worker behind an
 * owner code. Read-only, and valid only inside the visit that received it (the shard's read lock is held then).
 */
final class NodeView {

    private final NodeStore nodes;
    private final WorkerSlots slots;

    NodeView(NodeStore nodes, WorkerSlots slots) {
        this.nodes = nodes;
        this.slots = slots;
    }

    /** Node ids are below this bound. */
    int nodeIdBound() {
        return nodes.highWater();
    }

    boolean isLive(int node) {
        return nodes.isLive(node);
    }

    long blockHash(int node) {
        return nodes.blockHash(node);
    }

    boolean hasParent(int node) {
        return nodes.hasParent(node);
    }

    long parentBlockHash(int node) {
        return nodes.parentBlockHash(node);
    }

    /** The live node of a node's parent, or {@link NodeStore#NONE} (see {@link NodeStore#parentNode}). */
    int parentNode(int node) {
        return nodes.parentNode(node);
    }

    int ownerCount(int node) {
        return nodes.owners().count(node);
    }

    /** Writes the node's owner codes ({@link MembershipCode}) into {@code out} (at least {@link #ownerCount} long). */
    int ownerCodes(int node, int[] out) {
        return nodes.owners().codes(node, out);
    }

    /** Adds to {@code out} the workers holding this block (any tier) that it does not list yet. */
    void addHolders(long blockHash, List<WorkerKey> out) {
        int node = nodes.findByBlockHash(blockHash);
        if (node == NodeStore.NONE) {
            return;
        }
        int[] codes = new int[ownerCount(node)];
        for (int o = 0, n = ownerCodes(node, codes); o < n; o++) {
            WorkerKey w = workerOfCode(codes[o]);
            if (w != null && !out.contains(w)) {
                out.add(w);
            }
        }
    }

    /** The worker of an owner code's slot, or null for a released slot. */
    WorkerKey workerOfCode(int code) {
        int slot = MembershipCode.slot(code);
        return slot < slots.highWater() ? slots.worker(slot) : null;
    }
}
