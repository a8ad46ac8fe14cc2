package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.Arrays;

/**
 * The dump of one tier of one shard as a resumable cursor: {@link PrefixIndex#dump} runs it one {@link #step} per
 * read-lock acquisition, so a writer waits for a few thousand nodes, never for the whole walk.
 *
 * <p>The cursor is a node id. Ids are stable while a node lives (pages never move; table resizes move table
 * entries, not ids), and every step re-reads what it needs under the lock, so writes between steps cannot
 * invalidate it. Each step scans ids in order; a live node not yet done is emitted after its ancestors, climbed by
 * block hash within the same step, so each emitted chain is exactly what a one-lock dump would have emitted at that
 * moment (a parent before its children within a tier).
 *
 * <p>Why a dump mixing moments is safe (ADR 0002): the cut is "at least". The registrations and their sequence
 * watermarks are read before the walk begins, and whatever is applied after a watermark is replayed after a restore
 * or a recovery (stores, removals and clears applied again in order leave the same state). A membership that no
 * write touches during the walk keeps its node, hence its id, for the whole walk, so the scan meets it and emits it
 * exactly once; only memberships changed during the walk, which the replay sets right, may be missing, stale or
 * repeated. Two rules keep the order parent-first across steps: a node whose id is marked done is never emitted
 * again (an id freed and reused by another block between steps is therefore skipped: that block is new, hence
 * replayed), and a block that an earlier step found missing as a parent is never emitted afterwards (it was stored
 * during the walk, hence replayed), so no parent follows a child that was emitted without it. A child emitted while
 * its parent was missing is an orphan in the dump, as it would be in a one-lock dump taken at that moment.
 *
 * <p>Not thread-safe; each step runs under the shard's read lock.
 */
final class DumpWalk {

    /** nodes scanned or climbed per read-lock acquisition */
    static final int CHUNK = 4_096;

    private final StorageTier storageTier;
    private final int tier;
    /** the node ids when the walk began: a node created later is newer than every watermark, so it may be skipped */
    private final int end;

    private int next;
    private boolean[] done;
    /** block hashes a step found missing as a parent: never emitted afterwards (they were stored during the walk) */
    private final LongOpenHashSet missingParents = new LongOpenHashSet();

    private int[] chain = new int[64];
    private int[] codes = new int[64];

    DumpWalk(StorageTier storageTier, int highWater) {
        this.storageTier = storageTier;
        this.tier = storageTier.ordinal();
        this.end = highWater;
        this.done = new boolean[highWater];
    }

    boolean finished() {
        return next >= end;
    }

    /** Emits from the cursor on until about {@code budget} nodes were scanned or climbed; true when finished. */
    boolean step(NodeStore nodes, WorkerSlots slots, DumpSink out, int budget) {
        if (done.length < nodes.highWater()) {
            done = Arrays.copyOf(done, Math.max(nodes.highWater(), done.length * 2));
        }
        OwnerSets owners = nodes.owners();
        int work = 0;
        while (next < end && work < budget) {
            int node = next++;
            work++;
            if (!nodes.isLive(node) || done[node]) {
                continue;
            }
            // climb to the first ancestor already done (or missing), then emit downwards
            int depth = 0;
            for (int x = node; ; ) {
                done[x] = true;
                if (depth == chain.length) {
                    chain = Arrays.copyOf(chain, depth * 2);
                }
                chain[depth++] = x;
                if (!nodes.hasParent(x)) {
                    break;
                }
                int parent = nodes.parentNode(x);
                if (parent == NodeStore.NONE) {
                    missingParents.add(nodes.parentBlockHash(x));
                    break;
                }
                if (done[parent]) {
                    break;
                }
                x = parent;
            }
            work += depth - 1;
            for (int d = depth - 1; d >= 0; d--) {
                int x = chain[d];
                if (missingParents.isEmpty() || !missingParents.contains(nodes.blockHash(x))) {
                    if (codes.length < owners.count(x)) {
                        codes = new int[owners.count(x) * 2];
                    }
                    emit(nodes, slots, out, x);
                }
            }
        }
        return finished();
    }

    private void emit(NodeStore nodes, WorkerSlots slots, DumpSink out, int node) {
        for (int o = 0, n = nodes.owners().codes(node, codes); o < n; o++) {
            int code = codes[o];
            if (MembershipCode.tier(code) == tier) {
                out.block(
                        slots.worker(MembershipCode.slot(code)),
                        storageTier,
                        nodes.hasParent(node),
                        nodes.parentBlockHash(node),
                        nodes.blockHash(node),
                        nodes.localHash(node));
            }
        }
    }
}
