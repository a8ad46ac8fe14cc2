package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.HashCommon;
import java.util.Arrays;

/**
 * The content-prefix probes of one query ({@link PrefixMatcher}'s): for each position a walk needed, the nodes of
 * the prefix table whose prefix and local hash are the query's there. The query's prefix hashes
 * ({@link ContentPrefix}) are pure arithmetic, so the probes of a batch of positions do not depend on each other
 * and their cache misses overlap. A position stays probed for the whole query: frames at different depths ask in
 * turn (one engine's frame runs ahead in line, the next starts further back), and re-probing a position that holds
 * a node per engine cost more than the walk (ADR 0001, "Twenty-fifth round"). Reused from query to query with its
 * matcher.
 */
final class PrefixProbe {

    private NodeStore nodes;
    private OwnerSets owners;
    private long[] query;
    /** the tier being walked, whose owner data {@link #probe} pre-loads */
    private int tier;

    /**
     * the probed candidates of position i, for every position probed in this query ({@code probedIn[i] == query
     * stamp}), are {@code probed[probedFrom[i] .. probedTo[i])}, in node id order
     */
    private int[] probed = new int[16];

    private int[] probedFrom = new int[16];

    private int[] probedTo = new int[16];
    /** per position: the stamp of the query that probed it (positions stay probed for the whole query) */
    private int[] probedIn = new int[16];

    private int stamp;
    /**
     * per probed position: whether its nodes are grouped by parent block hash ({@link #firstUnder}), so that a
     * frame finds its children with one look into a small hash table, not by looking through every node there
     */
    private boolean[] byParent = new boolean[16];
    /** per position that is {@link #byParent}: where its table starts in {@link #heads} */
    private int[] headAt = new int[16];
    /**
     * the tables of the query's grouped positions, one after the other, each a power of two of slots of at least
     * twice its nodes (linear probing): the first probed index of a parent's group, plus one (0: empty)
     */
    private int[] heads = new int[64];

    private int headCount;
    /** the parent block hash of {@code probed[k]}, where its position is {@link #byParent} */
    private long[] probedParent = new long[16];
    /** the next probed index with the same parent at the same position, in node id order (-1: the last) */
    private int[] groupNext = new int[16];

    /** the end of the last batch: a walk that needs the position there extends it (a doubled batch) */
    private int probedHi;

    private int probedCount;
    private int batch = 1;
    /** the content prefix of position {@code probedHi - 1} (the root's before any probe) */
    private int lastPrefix = ContentPrefix.ROOT;

    /** per position of a batch: its home slot, first entry and prefix (grown together, to the batch) */
    private int[] slotScratch = new int[8];

    private int[] entryScratch = new int[8];
    private int[] prefixScratch = new int[8];
    /** per probed node of a batch: its owner word (a position may have several nodes, so not the arrays above) */
    private int[] wordScratch = new int[8];
    /**
     * More nodes than this at one position are grouped by parent ({@link #byParent}); fewer are looked through, which
     * costs less than building the table.
     */
    static final int BY_PARENT = 4;

    /** what the pre-loads read, kept where the compiler cannot drop them (a racy, never-read static is enough) */
    private static long touched;

    void reset(NodeStore nodes, long[] query) {
        this.nodes = nodes;
        this.owners = nodes.owners();
        this.query = query;
        if (probedFrom.length < query.length + 1) {
            probedFrom = new int[query.length + 1];
            probedTo = new int[query.length + 1];
            probedIn = new int[query.length + 1];
            byParent = new boolean[query.length + 1];
            headAt = new int[query.length + 1];
        }
        if (++stamp == 0) { // wrapped: no position may look probed by an old query
            Arrays.fill(probedIn, 0);
            stamp = 1;
        }
        probedHi = -1;
        probedCount = 0;
        headCount = 0;
        batch = 1;
        lastPrefix = ContentPrefix.ROOT;
    }

    /** Drops the query's references, so that a probe kept for the next query keeps no index alive. */
    void release() {
        nodes = null;
        owners = null;
        query = null;
    }

    void tier(int tier) {
        this.tier = tier;
    }

    /** Makes sure position {@code pos} is probed; {@code node} is the node matched at {@code pos - 1} (NONE: root). */
    void cover(int node, int pos) {
        if (probedIn[pos] != stamp) {
            probeFrom(node, pos);
        }
    }

    /**
     * Position {@code pos}'s probed nodes are {@code node(first(pos)) .. node(end(pos) - 1)} (covered first), in
     * node id order.
     */
    int first(int pos) {
        return probedFrom[pos];
    }

    /** The end of position {@code pos}'s probed nodes (see {@link #first}). */
    int end(int pos) {
        return probedTo[pos];
    }

    int node(int k) {
        return probed[k];
    }

    /** Nodes probed in this query so far (tests). */
    int probedCount() {
        return probedCount;
    }

    /**
     * The first of position {@code pos}'s probed nodes ({@link #node}) that may have parent {@code parentHash}, or -1;
     * {@link #nextUnder} gives the others, in node id order. Where engines whose hash seeds differ hold the same
     * content, a position has a node per engine: every frame looking through all of them made a lookup quadratic in
     * the engines, and a sort per position and a binary search per frame were half of what was left (ADR 0001).
     */
    int firstUnder(int pos, long parentHash) {
        int from = probedFrom[pos];
        if (!byParent[pos]) {
            return from < probedTo[pos] ? from : -1;
        }
        return heads[slotOf(headAt[pos], tableSize(probedTo[pos] - from) - 1, parentHash)] - 1;
    }

    /** The node after {@code k} at position {@code pos} that may have the same parent ({@link #firstUnder}), or -1. */
    int nextUnder(int pos, int k) {
        if (!byParent[pos]) {
            return k + 1 < probedTo[pos] ? k + 1 : -1;
        }
        return groupNext[k];
    }

    /**
     * Probes a batch of positions from {@code pos}, where {@code node} (matched at {@code pos - 1}, or NONE: the root)
     * ends the last batch or not. Batches double while the walk keeps needing the positions right after the last
     * batch (a walk that finds no next node in line probes like one that never looks), start small again after a
     * jump, so a walk that finds most next nodes in line probes few positions it skips, and end before a position
     * probed already.
     */
    private void probeFrom(int node, int pos) {
        if (pos == probedHi) {
            batch = Math.min(batch * 2, 512);
        } else {
            // elsewhere: the prefix before pos is the node's own (the walk reached it through its prefix)
            batch = 1;
            lastPrefix = node == NodeStore.NONE ? ContentPrefix.ROOT : nodes.prefix(node);
        }
        probe(pos);
    }

    /**
     * Probes up to {@link #batch} positions from {@code from}: first every position's home slot (independent loads),
     * then every position's entries and nodes (independent of the other positions again), keeping the nodes whose
     * prefix and local hash are the query's.
     */
    private void probe(int from) {
        NodeTable table = nodes.probeTable();
        int n = Math.min(batch, query.length - from);
        for (int i = 1; i < n; i++) {
            if (probedIn[from + i] == stamp) { // probed already: the batch ends before it
                n = i;
                break;
            }
        }
        int batchFirst = probedCount;
        if (slotScratch.length < n) {
            slotScratch = new int[n];
            entryScratch = new int[n];
            prefixScratch = new int[n];
        }
        int[] prefixes = prefixScratch;
        int p = lastPrefix;
        for (int i = 0; i < n; i++) {
            p = ContentPrefix.extend(p, query[from + i]);
            prefixes[i] = p;
            slotScratch[i] = table.home(ContentPrefix.tableHash(p));
            entryScratch[i] = table.at(slotScratch[i]); // every position's first miss starts now
        }
        lastPrefix = p;
        // every position's first entry whose hash bits agree (the table's lines are cached by now) and its node,
        // loaded where no branch waits on the node, so the node misses of all positions overlap too; the check below
        // resumes there (the entries skipped cannot hold the prefix) and finds the node's line in the cache. The
        // home slot is often another key's (the table is 53-80 % full), so loading its node would waste the miss.
        long nodeLoads = 0;
        for (int i = 0; i < n; i++) {
            long hash = ContentPrefix.tableHash(prefixes[i]);
            int s = slotScratch[i];
            int entry = entryScratch[i];
            while (entry != 0 && !NodeTable.mayHold(entry, hash)) {
                s = table.next(s);
                entry = table.at(s);
            }
            slotScratch[i] = s;
            entryScratch[i] = entry;
            if (entry != 0) {
                int node = NodeTable.node(entry);
                nodeLoads += nodes.page(node)[NodeStore.STRIDE * (node & NodeStore.OFFSET_MASK) + NodeStore.PREFIX];
            }
        }
        for (int i = 0; i < n; i++) {
            int prefix = prefixes[i];
            long hash = ContentPrefix.tableHash(prefix);
            long local = query[from + i];
            int first = probedCount;
            probedFrom[from + i] = first;
            probedIn[from + i] = stamp;
            int entry = entryScratch[i];
            for (int s = slotScratch[i]; ; s = table.next(s), entry = table.at(s)) {
                if (entry == 0) {
                    break;
                }
                int node = NodeTable.node(entry);
                if (NodeTable.mayHold(entry, hash)) {
                    long[] page = nodes.page(node);
                    int at = NodeStore.STRIDE * (node & NodeStore.OFFSET_MASK);
                    // the prefix's long holds the owner word too: the pass below finds it in the cache
                    if (NodeStore.prefixOf(page[at + NodeStore.PREFIX]) == prefix
                            && page[at + NodeStore.LOCAL] == local) {
                        addProbed(node, first);
                    }
                }
            }
            probedTo[from + i] = probedCount;
            byParent[from + i] = probedCount - first > BY_PARENT;
            if (byParent[from + i]) {
                groupByParent(from + i, first, probedCount);
            }
        }
        probedHi = from + n;
        // then the probed nodes' owner words, and what they point to: independent loads again
        int found = probedCount - batchFirst;
        if (wordScratch.length < found) {
            wordScratch = new int[Math.max(found, 2 * wordScratch.length)];
        }
        long touched = nodeLoads;
        for (int k = 0; k < found; k++) {
            wordScratch[k] = owners.wordOf(probed[batchFirst + k]);
            touched += nodes.touchRun(probed[batchFirst + k]); // where the run from this node goes on
        }
        for (int k = 0; k < found; k++) {
            touched += owners.touch(wordScratch[k], tier);
        }
        PrefixProbe.touched = touched;
    }

    /**
     * Groups {@code probed[from, to)}, position {@code pos}'s nodes, by parent block hash: a table of their groups'
     * first nodes, and in each group a list in node id order (built from the last node back).
     */
    private void groupByParent(int pos, int from, int to) {
        if (probedParent.length < probed.length) {
            // positions probed earlier keep theirs
            probedParent = Arrays.copyOf(probedParent, probed.length);
            groupNext = Arrays.copyOf(groupNext, probed.length);
        }
        int size = tableSize(to - from);
        if (heads.length < headCount + size) {
            heads = Arrays.copyOf(heads, Math.max(headCount + size, 2 * heads.length));
        }
        int base = headCount;
        headAt[pos] = base;
        headCount += size;
        Arrays.fill(heads, base, base + size, 0);
        for (int k = to - 1; k >= from; k--) {
            long parent = nodes.parentBlockHash(probed[k]);
            probedParent[k] = parent;
            int s = slotOf(base, size - 1, parent);
            groupNext[k] = heads[s] - 1;
            heads[s] = k + 1;
        }
    }

    /** Slots of a grouped position's table: a power of two, at least twice its nodes. */
    private static int tableSize(int count) {
        return Integer.highestOneBit(4 * count - 1);
    }

    /**
     * In the table of {@code mask + 1} slots from {@code base}: the slot (an index into {@link #heads}) of
     * {@code parentHash}'s group, or the empty one where it would start.
     */
    private int slotOf(int base, int mask, long parentHash) {
        int s = (int) HashCommon.mix(parentHash) & mask;
        while (heads[base + s] != 0 && probedParent[heads[base + s] - 1] != parentHash) {
            s = (s + 1) & mask;
        }
        return base + s;
    }

    /** Appends a probed node, keeping each position's nodes in node id order (the test oracle's order). */
    private void addProbed(int node, int first) {
        if (probedCount == probed.length) {
            probed = Arrays.copyOf(probed, probedCount * 2);
        }
        int k = probedCount++;
        while (k > first && probed[k - 1] > node) {
            probed[k] = probed[k - 1];
            k--;
        }
        probed[k] = node;
    }
}
