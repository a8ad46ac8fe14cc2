package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.HashCommon;
import it.unimi.dsi.fastutil.ints.IntArrayList;

import java.util.Arrays;

/**
 * The block nodes of one prefix index, as struct-of-arrays indexed by an int node id (no object per node).
 *
 * <p>A node is one engine block: its block hash (the engine's opaque chained hash, unique key), the block hash of
 * its parent (if any), its local hash (XXH3 of its tokens, what queries carry) and its owners ({@link OwnerSets}).
 * Two open-addressing tables hold node ids only (4 bytes a slot) and read the keys back from the node arrays: one
 * by block hash, one by (parent block hash, local hash) for walking down from
 * a parent. The child table keeps a 32-bit fingerprint of the key next to each node id, so a probe reads a node
 * only when the fingerprint agrees (a query's step costs about one cache miss for the table and one for the node).
 * Several nodes may share one (parent, local) key (engines with different hash seeds): the child table simply holds
 * several entries with that key.
 *
 * <p>Not thread-safe: {@link PrefixIndex} guards it with its lock.
 */
final class NodeStore {

    static final int NONE = -1;

    private static final byte HAS_PARENT = 1;
    private static final byte LIVE = 2;
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
    private byte[][] flags = new byte[16][];
    private final OwnerSets owners = new OwnerSets();
    private int pages;

    private int highWater;
    private int[] freeIds = new int[16];
    private int freeCount;
    private int liveCount;

    private int[] byBlockHash;
    private int byBlockHashSize;
    /** entries {@code fingerprint << 32 | (node + 1)}, 0 = empty */
    private long[] byChild;
    private int byChildSize;

    NodeStore() {
        byBlockHash = new int[1024];
        byChild = new long[1024];
    }

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

    boolean isLive(int node) {
        return (flags[node >>> PAGE_BITS][node & OFFSET_MASK] & LIVE) != 0;
    }

    long blockHash(int node) {
        return hashes[node >>> PAGE_BITS][3 * (node & OFFSET_MASK) + BLOCK];
    }

    long localHash(int node) {
        return hashes[node >>> PAGE_BITS][3 * (node & OFFSET_MASK) + LOCAL];
    }

    boolean hasParent(int node) {
        return (flags[node >>> PAGE_BITS][node & OFFSET_MASK] & HAS_PARENT) != 0;
    }

    long parentBlockHash(int node) {
        return hashes[node >>> PAGE_BITS][3 * (node & OFFSET_MASK) + PARENT];
    }

    // ---- create / free -------------------------------------------------------------------------------------

    /** Creates a node (the caller checked that no node has this block hash). */
    int create(long blockHash, boolean hasParent, long parentBlockHash, long local) {
        int node = freeCount > 0 ? freeIds[--freeCount] : newId();
        long[] page = hashes[node >>> PAGE_BITS];
        int at = 3 * (node & OFFSET_MASK);
        page[at + BLOCK] = blockHash;
        page[at + PARENT] = hasParent ? parentBlockHash : 0L;
        page[at + LOCAL] = local;
        setFlags(node, LIVE | (hasParent ? HAS_PARENT : 0));
        owners.reset(node);
        insertByBlockHash(node);
        insertByChild(node);
        liveCount++;
        return node;
    }

    /** Frees a node that has no owner left. Its children stay: they are keyed by its block hash, not its id. */
    void free(int node) {
        removeFromBlockHashTable(node);
        removeFromChildTable(node);
        setFlags(node, 0);
        owners.reset(node);
        if (freeCount == freeIds.length) {
            freeIds = Arrays.copyOf(freeIds, freeCount * 2);
        }
        freeIds[freeCount++] = node;
        liveCount--;
    }

    private int newId() {
        if (highWater == pages * PAGE) {
            if (pages == hashes.length) {
                int n = pages * 2;
                hashes = Arrays.copyOf(hashes, n);
                flags = Arrays.copyOf(flags, n);
            }
            hashes[pages] = new long[3 * PAGE];
            flags[pages] = new byte[PAGE];
            owners.addPage(pages);
            pages++;
        }
        return highWater++;
    }

    private void setFlags(int node, int value) {
        flags[node >>> PAGE_BITS][node & OFFSET_MASK] = (byte) value;
    }

    // ---- lookups ---------------------------------------------------------------------------------------------

    /** The node with this block hash, or NONE. */
    int findByBlockHash(long blockHash) {
        int mask = byBlockHash.length - 1;
        for (int i = (int) blockHashSlot(blockHash) & mask; ; i = (i + 1) & mask) {
            int entry = byBlockHash[i];
            if (entry == 0) {
                return NONE;
            }
            if (blockHash(entry - 1) == blockHash) {
                return entry - 1;
            }
        }
    }

    /**
     * Collects into {@code out} (cleared first) every node whose parent is {@code parentBlockHash} (or the root when
     * {@code !hasParent}) and whose local hash is {@code local}; usually none or one.
     */
    void children(boolean hasParent, long parentBlockHash, long local, IntArrayList out) {
        out.clear();
        long hash = childSlotHash(hasParent, parentBlockHash, local);
        int fingerprint = (int) (hash >>> 32);
        int mask = byChild.length - 1;
        for (int i = (int) hash & mask; ; i = (i + 1) & mask) {
            long entry = byChild[i];
            if (entry == 0) {
                return;
            }
            if ((int) (entry >>> 32) == fingerprint) {
                int node = (int) entry - 1;
                // a root node stores parent 0: compare the two hashes (one cache line) before reading the flags
                long[] page = hashes[node >>> PAGE_BITS];
                int at = 3 * (node & OFFSET_MASK);
                if (page[at + LOCAL] == local && page[at + PARENT] == (hasParent ? parentBlockHash : 0L)
                        && hasParent(node) == hasParent) {
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

    private long childSlotHash(int node) {
        return childSlotHash(hasParent(node), parentBlockHash(node), localHash(node));
    }

    // ---- open addressing, linear probing, backward-shift deletion (no tombstones) -----------------------------

    private void insertByBlockHash(int node) {
        if ((byBlockHashSize + 1) * 4L > byBlockHash.length * 3L) {
            int[] bigger = new int[byBlockHash.length * 2];
            for (int entry : byBlockHash) {
                if (entry != 0) {
                    placeByBlockHash(bigger, entry - 1);
                }
            }
            byBlockHash = bigger;
        }
        placeByBlockHash(byBlockHash, node);
        byBlockHashSize++;
    }

    private void placeByBlockHash(int[] table, int node) {
        int mask = table.length - 1;
        int i = (int) blockHashSlot(blockHash(node)) & mask;
        while (table[i] != 0) {
            i = (i + 1) & mask;
        }
        table[i] = node + 1;
    }

    private void insertByChild(int node) {
        if ((byChildSize + 1) * 4L > byChild.length * 3L) {
            long[] bigger = new long[byChild.length * 2];
            for (long entry : byChild) {
                if (entry != 0) {
                    placeByChild(bigger, (int) entry - 1);
                }
            }
            byChild = bigger;
        }
        placeByChild(byChild, node);
        byChildSize++;
    }

    private void placeByChild(long[] table, int node) {
        long hash = childSlotHash(node);
        int mask = table.length - 1;
        int i = (int) hash & mask;
        while (table[i] != 0) {
            i = (i + 1) & mask;
        }
        table[i] = (hash >>> 32) << 32 | (node + 1L);
    }

    private void removeFromBlockHashTable(int node) {
        int mask = byBlockHash.length - 1;
        int gap = (int) blockHashSlot(blockHash(node)) & mask;
        while (byBlockHash[gap] != node + 1) {
            gap = (gap + 1) & mask;
        }
        for (int i = (gap + 1) & mask; byBlockHash[i] != 0; i = (i + 1) & mask) {
            int home = (int) blockHashSlot(blockHash(byBlockHash[i] - 1)) & mask;
            if (!cyclicallyBetween(home, gap, i)) {
                byBlockHash[gap] = byBlockHash[i];
                gap = i;
            }
        }
        byBlockHash[gap] = 0;
        byBlockHashSize--;
    }

    private void removeFromChildTable(int node) {
        int mask = byChild.length - 1;
        int gap = (int) childSlotHash(node) & mask;
        while ((int) byChild[gap] != node + 1) {
            gap = (gap + 1) & mask;
        }
        for (int i = (gap + 1) & mask; byChild[i] != 0; i = (i + 1) & mask) {
            int home = (int) childSlotHash((int) byChild[i] - 1) & mask;
            if (!cyclicallyBetween(home, gap, i)) {
                byChild[gap] = byChild[i];
                gap = i;
            }
        }
        byChild[gap] = 0;
        byChildSize--;
    }

    /** True when {@code home} lies cyclically in (gap, i]: that entry must stay where it is. */
    private static boolean cyclicallyBetween(int home, int gap, int i) {
        return gap <= i ? home > gap && home <= i : home > gap || home <= i;
    }
}
