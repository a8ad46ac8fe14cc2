package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The tiered match of one query (Dynamo's tiered match, made parent-exact: docs/adr/0001-prefix-index.md). A
 * worker matches position i on a tier when it holds there a node whose local hash is {@code q[i]} and whose parent
 * is the node it matched at i − 1 (the root for i = 0). The device run starts at the root; the host-pinned run
 * continues from where the device run stopped (workers with nothing yet start at the root), then disk, then
 * external.
 *
 * <p>The candidates of every position come from {@link NodeStore}'s content-prefix table: the query's prefix hashes
 * ({@link ContentPrefix}) are pure arithmetic, so the probes of a batch of positions do not depend on each other
 * and their cache misses overlap ({@link PrefixProbe}); batches double (1, 2, … 512 positions), so a query that
 * stops early probes at most about twice the positions it matched. A step then only checks a candidate's parent link
 * against the frame's node (parent-exact matching) on data the probes already loaded. Most steps down a chain need
 * no probe at all: the blocks of one {@code Stored} have consecutive node ids, and when the next id is provably the
 * only candidate ({@link NodeStore#soleNextChild}) the step reads its line, next to the last one, instead; and where
 * the next ids are also held by the same workers, a frame takes the whole run at once ({@link NodeStore#inLineRun}).
 *
 * <p>Workers that sit on the same node walk as one frame whose set of workers is a bitset over worker slots. A step
 * looks the query's next local hash up among the node's children and intersects the frame's set with each
 * candidate child's owners on the tier ({@link OwnerSets#intersect}): one bit test per owner of a small set, one
 * 64-bit AND per 64 workers of a large one. So the cost of a step does not grow with the number of workers that
 * share the prefix; a worker costs work only where its run ends (once per frame it leaves).
 *
 * <p>A worker may follow several same-content children (engines with different hash seeds) and keeps its deepest
 * run; the next tier continues from the end of every run of that depth (several nodes when runs tie), so the answer
 * depends on the memberships only, not on which node ids they got (a recovered index numbers its nodes in dump
 * order, not in the order its source created them).
 *
 * <p>Runs under the index's read lock; a query allocates its runs and, now and then, a matcher ({@link #SPARE}).
 */
final class PrefixMatcher {

    private static final int ROOT = NodeStore.NONE;

    /**
     * A matcher's arrays kept for the next query: taken by one query at a time (a query that finds none makes its
     * own; one that throws drops its own), so a lookup allocates little more than its answer.
     */
    private static final AtomicReference<PrefixMatcher> SPARE = new AtomicReference<>();

    private NodeStore nodes;
    private OwnerSets owners;
    private long[] query;
    private int slots;
    private int words;
    /** per worker slot: how far it got (blocks), and the node it got to (the first of its runs that deep) */
    private int[] reach;

    private int[] at = new int[0];
    /** the other ends of runs as deep as a worker's first ({@code node << 32 | slot}); stale once it got deeper */
    private final LongArrayList ties = new LongArrayList();
    /** per entry of {@link #ties}: the run's depth */
    private final IntArrayList tieDepths = new IntArrayList();

    private final IntArrayList candidates = new IntArrayList(4);
    /** the content-prefix probes of the query's positions */
    private final PrefixProbe probes = new PrefixProbe();

    private final ArrayDeque<long[]> spare = new ArrayDeque<>();
    /** the walk under way is the query's last (see {@link #walk}) */
    private boolean lastWalk;

    /**
     * The frame stack, one entry per frame: node, position, whether a step made it (so all its workers hold the
     * node on the tier), word range and bitset.
     */
    private int depth;

    private int[] frameNode = new int[16];
    private int[] framePos = new int[16];
    private boolean[] frameMade = new boolean[16];
    private int[] frameLo = new int[16];
    private int[] frameHi = new int[16];
    private long[][] frameSet = new long[16][];

    /** Sets up this matcher for one query; {@link #reach} is new (the answer keeps it), the rest is reused. */
    private void reset(NodeStore nodes, long[] query, int slots) {
        this.nodes = nodes;
        this.owners = nodes.owners();
        this.query = query;
        this.slots = slots;
        int words = (slots + 63) >>> 6;
        if (words != this.words) {
            spare.clear(); // the frames' bitsets are exactly this long
            this.words = words;
        }
        this.reach = new int[slots];
        if (at.length < slots) {
            at = new int[slots];
        }
        ties.clear();
        tieDepths.clear();
        probes.reset(nodes, query);
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
        PrefixMatcher m = SPARE.getAndSet(null);
        if (m == null) {
            m = new PrefixMatcher();
        }
        m.reset(nodes, query, slots);
        boolean host = tierHasMembers[StorageTier.HOST_PINNED.ordinal()];
        boolean disk = tierHasMembers[StorageTier.DISK.ordinal()];
        boolean external = tierHasMembers[StorageTier.EXTERNAL.ordinal()];
        m.walk(StorageTier.DEVICE.ordinal(), true, !(host || disk || external));
        // the common device-only index shares one array for the three (read-only) runs
        int[] device = host || disk || external ? m.reach.clone() : m.reach;
        if (host) {
            m.walk(StorageTier.HOST_PINNED.ordinal(), false, !(disk || external));
        }
        int[] hostRuns = disk || external ? m.reach.clone() : m.reach;
        if (disk) {
            m.walk(StorageTier.DISK.ordinal(), false, !external);
        }
        int[] diskRuns = external ? m.reach.clone() : m.reach;
        if (external) {
            m.walk(StorageTier.EXTERNAL.ordinal(), false, true);
        }
        SlotRuns runs = new SlotRuns(device, hostRuns, diskRuns, m.reach);
        m.nodes = null; // keeps no index alive
        m.owners = null;
        m.query = null;
        m.reach = null;
        m.probes.release();
        SPARE.set(m);
        return runs;
    }

    /**
     * Extends every worker's run on one tier: continuing workers from their nodes, the others from the root.
     * {@code first}: no worker has a run yet (the device walk), so every worker starts at the root. {@code last}: no
     * walk follows, so a run's end only has to raise its worker's reach (no walk continues from its node).
     */
    private void walk(int tier, boolean first, boolean last) {
        probes.tier(tier);
        lastWalk = last;
        long[] root = take();
        if (first) {
            // nobody has a run: every worker starts at the root
            Arrays.fill(root, -1L);
            if ((slots & 63) != 0) {
                root[words - 1] = -1L >>> (64 - (slots & 63));
            }
        } else {
            for (int w = 0; w < slots; w++) {
                if (reach[w] == 0) {
                    root[w >>> 6] |= 1L << w;
                }
            }
            pushContinuations();
        }
        // frames that no step made (the root's, the continuations) end nobody's run
        push(ROOT, 0, false, 0, words, root);
        while (depth > 0) {
            step(tier);
        }
    }

    /**
     * One frame per node that workers continue from (every end of their deepest runs), pushed in node order (as the
     * owner-scan oracle does).
     */
    private void pushContinuations() {
        int count = 0;
        for (int w = 0; w < slots; w++) {
            if (reach[w] > 0) {
                count++;
            }
        }
        if (count == 0) {
            return;
        }
        long[] byNode = new long[count + ties.size()];
        int k = 0;
        for (int w = 0; w < slots; w++) {
            if (reach[w] > 0) {
                byNode[k++] = (long) at[w] << 32 | w;
            }
        }
        for (int t = 0; t < ties.size(); t++) {
            long tie = ties.getLong(t);
            if (tieDepths.getInt(t) == reach[(int) tie]) {
                byNode[k++] = tie;
            }
        }
        Arrays.sort(byNode, 0, k);
        for (int i = 0; i < k; ) {
            int node = (int) (byNode[i] >>> 32);
            int pos = reach[(int) byNode[i]];
            long[] set = take();
            int lo = Integer.MAX_VALUE;
            int hi = 0;
            for (; i < k && (int) (byNode[i] >>> 32) == node; i++) {
                int w = (int) byNode[i];
                set[w >>> 6] |= 1L << w;
                lo = Math.min(lo, w >>> 6);
                hi = Math.max(hi, (w >>> 6) + 1);
            }
            push(node, pos, false, lo, hi, set);
        }
    }

    private void step(int tier) {
        int top = --depth;
        int node = frameNode[top];
        int pos = framePos[top];
        boolean made = frameMade[top];
        int lo = frameLo[top];
        int hi = frameHi[top];
        long[] set = frameSet[top];
        frameSet[top] = null;
        int pushedFrom = depth;
        while (pos < query.length) {
            if (made) {
                // a step made this frame, so all its workers hold node on the tier, hence every block of a run in
                // line with the same holders: they keep going without a probe or an intersection
                int run = nodes.inLineRun(node, query, pos);
                if (run > 0) {
                    node += run;
                    pos += run;
                    if (pos == query.length) {
                        break;
                    }
                }
            }
            childrenAt(node, pos);
            if (candidates.size() != 1) {
                branch(tier, pos, set, lo, hi);
                break;
            }
            // one child: the general step would push its frame and pop it at once. While every worker of this
            // frame holds it, nobody's run ends here, so advance in place (no push or pop)
            int child = candidates.getInt(0);
            if (made && owners.covers(child, node, tier)) {
                // a step made this frame, so all its workers hold node on the tier, hence child too
                node = child;
                pos++;
                continue;
            }
            long[] next = take();
            long range = owners.intersect(child, tier, set, lo, hi, next);
            if (range != ((long) lo << 32 | hi) || !Arrays.equals(set, lo, hi, next, lo, hi)) {
                if ((int) (range >>> 32) < (int) range) {
                    push(child, pos + 1, true, (int) (range >>> 32), (int) range, next);
                } else {
                    spare.push(next);
                }
                break;
            }
            Arrays.fill(set, lo, hi, 0L);
            spare.push(set);
            set = next;
            node = child;
            pos++;
            made = true;
        }
        if (made) {
            // workers of this frame that advanced into no child end their run here
            for (int f = pushedFrom; f < depth; f++) {
                long[] advanced = frameSet[f];
                for (int i = frameLo[f]; i < frameHi[f]; i++) {
                    set[i] &= ~advanced[i];
                }
            }
            for (int i = lo; i < hi; i++) {
                for (long bits = set[i]; bits != 0; bits &= bits - 1) {
                    int w = i << 6 | Long.numberOfTrailingZeros(bits);
                    if (lastWalk) {
                        reach[w] = Math.max(reach[w], pos);
                    } else {
                        end(w, pos, node);
                    }
                }
            }
        }
        Arrays.fill(set, lo, hi, 0L);
        spare.push(set);
    }

    /** Pushes a frame for each of {@link #candidates} that some worker of {@code set} holds on the tier. */
    private void branch(int tier, int pos, long[] set, int lo, int hi) {
        for (int c = 0, n = candidates.size(); c < n; c++) {
            int child = candidates.getInt(c);
            long[] next = take();
            long range = owners.intersect(child, tier, set, lo, hi, next);
            int nextLo = (int) (range >>> 32);
            int nextHi = (int) range;
            if (nextLo < nextHi) {
                push(child, pos + 1, true, nextLo, nextHi, next);
            } else {
                spare.push(next);
            }
        }
    }

    /**
     * Collects into {@link #candidates} the nodes of position {@code pos} whose parent is {@code node}, in node id
     * order: the content-prefix probe's nodes there with that parent, or, without a probe, the node after
     * {@code node} when it is provably the only one ({@link NodeStore#soleNextChild}: most steps down a chain).
     */
    private void childrenAt(int node, int pos) {
        candidates.clear();
        if (node != ROOT) {
            int next = nodes.soleNextChild(node, query[pos]);
            if (next != NodeStore.NONE) {
                candidates.add(next);
                return;
            }
        }
        probes.cover(node, pos);
        long parentHash = node == ROOT ? 0L : nodes.blockHash(node);
        boolean hasParent = node != ROOT;
        for (int k = probes.firstUnder(pos, parentHash); k >= 0; k = probes.nextUnder(pos, k)) {
            int child = probes.node(k);
            if (nodes.parentBlockHash(child) == parentHash && nodes.hasParent(child) == hasParent) {
                candidates.add(child);
            }
        }
    }

    /** A run of {@code pos} blocks ending at {@code node}: keep the deepest, and every end of a tie with it. */
    private void end(int w, int pos, int node) {
        if (pos > reach[w]) {
            reach[w] = pos;
            at[w] = node;
        } else if (pos == reach[w] && node != at[w]) {
            ties.add((long) node << 32 | w);
            tieDepths.add(pos);
        }
    }

    private void push(int node, int pos, boolean made, int lo, int hi, long[] set) {
        if (depth == frameNode.length) {
            int n = depth * 2;
            frameNode = Arrays.copyOf(frameNode, n);
            framePos = Arrays.copyOf(framePos, n);
            frameMade = Arrays.copyOf(frameMade, n);
            frameLo = Arrays.copyOf(frameLo, n);
            frameHi = Arrays.copyOf(frameHi, n);
            frameSet = Arrays.copyOf(frameSet, n);
        }
        frameNode[depth] = node;
        framePos[depth] = pos;
        frameMade[depth] = made;
        frameLo[depth] = lo;
        frameHi[depth] = hi;
        frameSet[depth] = set;
        depth++;
    }

    /** A zeroed bitset over all slots, reused from finished frames when one is spare. */
    private long[] take() {
        long[] set = spare.poll();
        return set != null ? set : new long[words];
    }
}
