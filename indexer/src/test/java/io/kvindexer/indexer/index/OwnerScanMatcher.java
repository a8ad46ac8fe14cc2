package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.Arrays;

/**
 * The matcher the index used before {@link PrefixMatcher}, kept as the test oracle for it
 * ({@code PrefixMatcherDifferentialTest}): each step passes over every owner of the child node, so a prompt whose
 * prefix W workers hold costs O(blocks × W). Same semantics (docs/adr/0001-prefix-index.md): a worker matches
 * position i on a tier when it holds there a node whose local hash is {@code q[i]} and whose parent is the node it
 * matched at i − 1 (the root for i = 0). The device run starts at the root; the host-pinned run continues from
 * where the device run stopped (workers with nothing yet start at the root), then disk, then external.
 *
 * <p>Workers walk in groups that sit on the same node, so a step costs one child lookup plus one pass over the
 * child's owners.
 */
final class OwnerScanMatcher {

    private static final int ROOT = NodeStore.NONE;
    private static final int ANY = -1;

    private final NodeStore nodes;
    private final long[] query;
    /** per worker slot: how far it got (blocks), and the node it got to (the first of its runs that deep) */
    private final int[] reach;

    private final int[] at;
    /** the other ends of runs as deep as a worker's first ({@code node << 32 | slot}), with their depths */
    private final LongArrayList ties = new LongArrayList();

    private final IntArrayList tieDepths = new IntArrayList();
    private final int[] mark;
    /** per worker slot: it already had a run when the current tier's walk began (so it does not restart at the root) */
    private final boolean[] continuing;

    private int stamp;
    private final IntArrayList stack;
    private final IntArrayList candidates = new IntArrayList(4);

    private OwnerScanMatcher(NodeStore nodes, long[] query, int slots) {
        this.nodes = nodes;
        this.query = query;
        this.reach = new int[slots];
        this.at = new int[slots];
        this.mark = new int[slots];
        this.continuing = new boolean[slots];
        this.stack = new IntArrayList(slots + 64);
        Arrays.fill(at, ROOT);
    }

    /**
     * Matches a query; returns the runs per worker slot, or null when there is nothing to match against.
     *
     * @param tierHasMembers per tier ordinal, whether any membership exists (empty tiers are skipped)
     */
    static SlotRuns match(NodeStore nodes, long[] query, int slots, boolean[] tierHasMembers) {
        if (query.length == 0 || slots == 0) {
            return null;
        }
        OwnerScanMatcher m = new OwnerScanMatcher(nodes, query, slots);
        m.walk(StorageTier.DEVICE.ordinal());
        int[] device = m.reach.clone();
        if (tierHasMembers[StorageTier.HOST_PINNED.ordinal()]) {
            m.walk(StorageTier.HOST_PINNED.ordinal());
        }
        int[] host = m.reach.clone();
        if (tierHasMembers[StorageTier.DISK.ordinal()]) {
            m.walk(StorageTier.DISK.ordinal());
        }
        int[] disk = m.reach.clone();
        if (tierHasMembers[StorageTier.EXTERNAL.ordinal()]) {
            m.walk(StorageTier.EXTERNAL.ordinal());
        }
        return new SlotRuns(device, host, disk, m.reach);
    }

    /** Extends every worker's run on one tier: continuing workers from their node, the others from the root. */
    private void walk(int tier) {
        pushContinuations();
        pushFrame(ROOT, 0, ANY);
        while (!stack.isEmpty()) {
            step(tier);
        }
    }

    /** Frames on the stack: {@code [w1 .. wk, node, pos, k]}; k = ANY for the root frame of non-continuing workers. */
    private void pushFrame(int node, int pos, int count) {
        stack.add(node);
        stack.add(pos);
        stack.add(count);
    }

    private void pushContinuations() {
        int count = 0;
        for (int w = 0; w < reach.length; w++) {
            continuing[w] = reach[w] > 0;
            if (continuing[w]) {
                count++;
            }
        }
        if (count == 0) {
            return;
        }
        long[] byNode = new long[count + ties.size()];
        int k = 0;
        for (int w = 0; w < reach.length; w++) {
            if (reach[w] > 0) {
                byNode[k++] = ((long) at[w] << 32) | w;
            }
        }
        for (int t = 0; t < ties.size(); t++) {
            if (tieDepths.getInt(t) == reach[(int) ties.getLong(t)]) {
                byNode[k++] = ties.getLong(t);
            }
        }
        Arrays.sort(byNode, 0, k);
        int i = 0;
        while (i < k) {
            int node = (int) (byNode[i] >>> 32);
            int start = stack.size();
            int j = i;
            for (; j < k && (int) (byNode[j] >>> 32) == node; j++) {
                stack.add((int) byNode[j]);
            }
            pushFrame(node, reach[(int) byNode[i]], stack.size() - start);
            i = j;
        }
    }

    private void step(int tier) {
        int top = stack.size();
        int count = stack.getInt(top - 1);
        int pos = stack.getInt(top - 2);
        int node = stack.getInt(top - 3);
        boolean any = count == ANY;
        int current = ++stamp;
        if (any) {
            stack.size(top - 3);
        } else {
            int start = top - 3 - count;
            for (int k = start; k < top - 3; k++) {
                mark[stack.getInt(k)] = current;
            }
            stack.size(start);
        }
        if (pos == query.length) {
            return;
        }
        if (node == ROOT) {
            nodes.children(false, 0L, query[pos], candidates);
        } else {
            nodes.children(true, nodes.blockHash(node), query[pos], candidates);
        }
        for (int c = 0, n = candidates.size(); c < n; c++) {
            int child = candidates.getInt(c);
            int before = stack.size();
            int[] owners = new int[nodes.owners().count(child)];
            for (int o = 0, end = nodes.owners().codes(child, owners); o < end; o++) {
                visit(owners[o], tier, any, current, pos, child);
            }
            int advanced = stack.size() - before;
            if (advanced > 0) {
                pushFrame(child, pos + 1, advanced);
            }
        }
    }

    /** One owner of a candidate child at {@code pos}: the worker advances if it is in the frame and holds it on this tier. */
    private void visit(int code, int tier, boolean any, int current, int pos, int child) {
        if (MembershipCode.tier(code) != tier) {
            return;
        }
        int w = MembershipCode.slot(code);
        if (any ? !continuing[w] : mark[w] == current) {
            // a worker may follow several same-content children (different hash seeds): keep its deepest run, and
            // the ends of the runs as deep, which the next tier continues from too
            if (pos + 1 > reach[w]) {
                reach[w] = pos + 1;
                at[w] = child;
            } else if (pos + 1 == reach[w] && child != at[w]) {
                ties.add((long) child << 32 | w);
                tieDepths.add(pos + 1);
            }
            stack.add(w);
        }
    }
}
