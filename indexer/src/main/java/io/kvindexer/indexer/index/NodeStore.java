package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.HashCommon;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.Arrays;

/**
 * The block nodes of one prefix index, as struct-of-arrays indexed by an int node id (no object per node).
 *
 * <p>A node is one engine block: its block hash (the engine's opaque chained hash, unique key), the block hash of
 * its parent (if any), its local hash (XXH3 of its tokens, what queries carry) and its owners ({@link OwnerSets}).
 * Two {@link NodeTable}s of node ids find nodes: one by block hash (for writers), one by (parent block hash, local
 * hash) for walking down from a parent (a query's step: about one cache miss in the table and one in the node).
 * Several nodes may share one (parent, local) key (engines with different hash seeds): the child table simply
 * holds several entries with that key.
 *
 * <p>Not thread-safe: {@link PrefixIndex} guards it with its lock.
 */
final class NodeStore {

    static final int NONE = -1;

    private static final long ROOT_KEY_SALT = 0x9E3779B97F4A7C15L;

    /**
     * Paged storage: pages of {@value #PAGE} nodes never move once allocated, so growing costs no copy and no
     * slack beyond the last page, and no array is big enough to become a (region-wasting) humongous object.
     * A node's three hashes sit next to each other ({@code [3 * offset + BLOCK|PARENT|LOCAL]}): one cache line.
     */
    static final int PAGE_BITS = 13;

    static final int PAGE = 1 << PAGE_BITS;
    static final int OFFSET_MASK = PAGE - 1;
    private static final int BLOCK = 0;
    private static final int PARENT = 1;
    private static final int LOCAL = 2;

    private long[][] hashes = new long[16][];
    /** one bit per node: whether it has a parent (a root block stores parent 0) */
    private long[][] hasParentBits = new long[16][];

    private final OwnerSets owners = new OwnerSets();
    private int pages;

    private int highWater;
    private int[] freeIds = new int[16];
    private int freeCount;
    private int liveCount;

    private final NodeTable byBlockHash =
            new NodeTable(node -> blockHashSlot(blockHash(node)), this::isLive, this::highWater);
    private final NodeTable byChild = new NodeTable(
            node -> childSlotHash(hasParent(node), parentBlockHash(node), localHash(node)),
            this::isLive,
            this::highWater);

    // ---- node fields ----------------------------------------------------------------------------------------

    /** The owners of every node (same node ids). */
    OwnerSets owners() {
        return owners;
    }

    int liveCount() {
        return liveCount;
    }

    /** Node ids are below this value; ids that are not {@link #isLive} are free. */
    int highWater() {
        return highWater;
    }

    /** A node is live while it has an owner (one is added as soon as it is created). */
    boolean isLive(int node) {
        return !owners.isEmpty(node);
    }

    long blockHash(int node) {
        return hashes[node >>> PAGE_BITS][3 * (node & OFFSET_MASK) + BLOCK];
    }

    long localHash(int node) {
        return hashes[node >>> PAGE_BITS][3 * (node & OFFSET_MASK) + LOCAL];
    }

    boolean hasParent(int node) {
        return (hasParentBits[node >>> PAGE_BITS][(node & OFFSET_MASK) >>> 6] & 1L << node) != 0;
    }

    long parentBlockHash(int node) {
        return hashes[node >>> PAGE_BITS][3 * (node & OFFSET_MASK) + PARENT];
    }

    // ---- create / free -------------------------------------------------------------------------------------

    /** Creates a node (the caller checked that no node has this block hash and adds an owner right away). */
    int create(long blockHash, boolean hasParent, long parentBlockHash, long local) {
        int node = freeCount > 0 ? freeIds[--freeCount] : newId();
        long[] page = hashes[node >>> PAGE_BITS];
        int at = 3 * (node & OFFSET_MASK);
        page[at + BLOCK] = blockHash;
        page[at + PARENT] = hasParent ? parentBlockHash : 0L;
        page[at + LOCAL] = local;
        long[] bits = hasParentBits[node >>> PAGE_BITS];
        int word = (node & OFFSET_MASK) >>> 6;
        bits[word] = hasParent ? bits[word] | 1L << node : bits[word] & ~(1L << node);
        owners.reset(node);
        byBlockHash.insert(node);
        byChild.insert(node);
        liveCount++;
        return node;
    }

    /** Frees a node that has no owner left. Its children stay: they are keyed by its block hash, not its id. */
    void free(int node) {
        byBlockHash.remove(node);
        byChild.remove(node);
        owners.reset(node);
        if (freeCount == freeIds.length) {
            freeIds = Arrays.copyOf(freeIds, freeCount * 2);
        }
        freeIds[freeCount++] = node;
        liveCount--;
    }

    private int newId() {
        if (highWater == NodeTable.MAX_NODES) {
            throw new IllegalStateException("the index holds " + highWater + " blocks, its maximum");
        }
        if (highWater == pages * PAGE) {
            if (pages == hashes.length) {
                int n = pages * 2;
                hashes = Arrays.copyOf(hashes, n);
                hasParentBits = Arrays.copyOf(hasParentBits, n);
            }
            hashes[pages] = new long[3 * PAGE];
            hasParentBits[pages] = new long[PAGE / 64];
            owners.addPage(pages);
            pages++;
        }
        return highWater++;
    }

    // ---- lookups ---------------------------------------------------------------------------------------------

    /** The node with this block hash, or NONE. */
    int findByBlockHash(long blockHash) {
        long hash = blockHashSlot(blockHash);
        for (int i = byBlockHash.home(hash); ; i = byBlockHash.next(i)) {
            int entry = byBlockHash.at(i);
            if (entry == 0) {
                return NONE;
            }
            if (NodeTable.mayHold(entry, hash) && blockHash(NodeTable.node(entry)) == blockHash) {
                return NodeTable.node(entry);
            }
        }
    }

    /** {@link #children(boolean, long, long, IntArrayList)} of {@code node}, or of the root when it is NONE. */
    void childrenOf(int node, long local, IntArrayList out) {
        if (node == NONE) {
            children(false, 0L, local, out);
        } else {
            children(true, blockHash(node), local, out);
        }
    }

    /**
     * Collects into {@code out} (cleared first) every node whose parent is {@code parentBlockHash} (or the root
     * when {@code !hasParent}) and whose local hash is {@code local}; usually none or one.
     */
    void children(boolean hasParent, long parentBlockHash, long local, IntArrayList out) {
        out.clear();
        long hash = childSlotHash(hasParent, parentBlockHash, local);
        long parent = hasParent ? parentBlockHash : 0L;
        for (int i = byChild.home(hash); ; i = byChild.next(i)) {
            int entry = byChild.at(i);
            if (entry == 0) {
                return;
            }
            if (NodeTable.mayHold(entry, hash)) {
                int node = NodeTable.node(entry);
                // a root node stores parent 0: compare the two hashes (one cache line) before the parent bit
                long[] page = hashes[node >>> PAGE_BITS];
                int at = 3 * (node & OFFSET_MASK);
                if (page[at + LOCAL] == local && page[at + PARENT] == parent && hasParent(node) == hasParent) {
                    out.add(node);
                }
            }
        }
    }

    private static long blockHashSlot(long blockHash) {
        return HashCommon.mix(blockHash);
    }

    private static long childSlotHash(boolean hasParent, long parentBlockHash, long local) {
        long parentTerm = hasParent ? HashCommon.mix(parentBlockHash) : ROOT_KEY_SALT;
        return HashCommon.mix(parentTerm * 31 + local);
    }
}
