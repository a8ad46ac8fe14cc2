package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.HashCommon;

import java.util.Arrays;

/**
 * The block nodes of one prefix index, as struct-of-arrays indexed by an int node id (no object per node).
 *
 * <p>A node is one engine block: its SEQUENCE hash (the engine's opaque chained hash, unique key), the sequence
 * hash of its parent (if any), its LOCAL hash (XXH3 of its tokens, what queries carry) and its owners: membership
 * codes {@code slot << 2 | tier}. Two open-addressing tables hold node ids only (4 bytes a slot) and read the keys
 * back from the node arrays: one by sequence hash, one by (parent sequence hash, local hash) for walking down from
 * a parent. Several nodes may share one (parent, local) key (engines with different hash seeds); they form a chain
 * through {@link #nextSameKey}, the table holding its head.
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
     * A node's three hashes sit next to each other ({@code [3 * offset + SEQ|PARENT|LOCAL]}): one cache line.
     */
    private static final int PAGE_BITS = 13;
    private static final int PAGE = 1 << PAGE_BITS;
    private static final int OFFSET_MASK = PAGE - 1;
    private static final int SEQ = 0;
    private static final int PARENT = 1;
    private static final int LOCAL = 2;

    private long[][] hashes = new long[16][];
    private byte[][] flags = new byte[16][];
    private int[][] nextSameKey = new int[16][];
    /** the first owner, inline (most blocks have one owner per tier); NONE when the node is free */
    private int[][] firstOwner = new int[16][];
    /** further owners: {@code [count, o1, o2, ...]}, null while there is at most one owner */
    private int[][][] moreOwners = new int[16][][];
    private int pages;

    private int highWater;
    private int[] freeIds = new int[16];
    private int freeCount;
    private int liveCount;

    private int[] bySeq;
    private int bySeqSize;
    private int[] byChild;
    private int byChildSize;

    NodeStore() {
        bySeq = new int[1024];
        byChild = new int[1024];
    }

    // ---- node fields ----------------------------------------------------------------------------------------

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

    long seqHash(int node) {
        return hashes[node >>> PAGE_BITS][3 * (node & OFFSET_MASK) + SEQ];
    }

    long localHash(int node) {
        return hashes[node >>> PAGE_BITS][3 * (node & OFFSET_MASK) + LOCAL];
    }

    boolean hasParent(int node) {
        return (flags[node >>> PAGE_BITS][node & OFFSET_MASK] & HAS_PARENT) != 0;
    }

    long parentSeqHash(int node) {
        return hashes[node >>> PAGE_BITS][3 * (node & OFFSET_MASK) + PARENT];
    }

    int nextSameKey(int node) {
        return nextSameKey[node >>> PAGE_BITS][node & OFFSET_MASK];
    }

    // ---- owners (membership codes slot << 2 | tier) -----------------------------------------------------------

    int ownerCount(int node) {
        if (firstOwner(node) == NONE) {
            return 0;
        }
        int[] more = moreOwners(node);
        return more == null ? 1 : 1 + more[0];
    }

    int ownerAt(int node, int i) {
        return i == 0 ? firstOwner(node) : moreOwners(node)[i];
    }

    boolean hasOwner(int node, int code) {
        if (firstOwner(node) == code) {
            return true;
        }
        int[] more = moreOwners(node);
        if (more != null) {
            for (int i = 1, end = more[0]; i <= end; i++) {
                if (more[i] == code) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Adds an owner; false when it was already there. */
    boolean addOwner(int node, int code) {
        if (hasOwner(node, code)) {
            return false;
        }
        if (firstOwner(node) == NONE) {
            setFirstOwner(node, code);
            return true;
        }
        int[] more = moreOwners(node);
        if (more == null) {
            more = new int[4];
        } else if (more[0] + 1 == more.length) {
            more = Arrays.copyOf(more, more.length + (more.length >> 1));
        }
        more[++more[0]] = code;
        setMoreOwners(node, more);
        return true;
    }

    /** Removes an owner; false when it was not there. */
    boolean removeOwner(int node, int code) {
        int[] more = moreOwners(node);
        if (firstOwner(node) == code) {
            if (more == null) {
                setFirstOwner(node, NONE);
            } else {
                setFirstOwner(node, more[more[0]]);
                dropLastMore(node, more);
            }
            return true;
        }
        if (more != null) {
            for (int i = 1, end = more[0]; i <= end; i++) {
                if (more[i] == code) {
                    more[i] = more[end];
                    dropLastMore(node, more);
                    return true;
                }
            }
        }
        return false;
    }

    /** Removes every owner whose slot is flagged in {@code slots}; returns how many were removed. */
    int removeOwnersOfSlots(int node, boolean[] slots) {
        int removed = 0;
        for (int i = ownerCount(node) - 1; i >= 0; i--) {
            int code = ownerAt(node, i);
            int slot = code >>> 2;
            if (slot < slots.length && slots[slot]) {
                removeOwner(node, code);
                removed++;
            }
        }
        return removed;
    }

    private void dropLastMore(int node, int[] more) {
        more[0]--;
        if (more[0] == 0) {
            setMoreOwners(node, null);
        } else if (more.length > 8 && more[0] < more.length / 4) {
            setMoreOwners(node, Arrays.copyOf(more, more[0] + 1 + (more[0] >> 1) + 1));
        }
    }

    // ---- create / free -------------------------------------------------------------------------------------

    /** Creates a node (the caller checked that no node has this sequence hash). */
    int create(long seq, boolean hasParent, long parentSeq, long local) {
        int node = freeCount > 0 ? freeIds[--freeCount] : newId();
        long[] page = hashes[node >>> PAGE_BITS];
        int at = 3 * (node & OFFSET_MASK);
        page[at + SEQ] = seq;
        page[at + PARENT] = hasParent ? parentSeq : 0L;
        page[at + LOCAL] = local;
        setFlags(node, LIVE | (hasParent ? HAS_PARENT : 0));
        setFirstOwner(node, NONE);
        setMoreOwners(node, null);
        insertBySeq(node);
        int head = childHead(hasParent, parentSeq, local);
        if (head == NONE) {
            setNextSameKey(node, NONE);
            insertByChild(node);
        } else {
            // append behind the head so the head slot stays valid
            setNextSameKey(node, nextSameKey(head));
            setNextSameKey(head, node);
        }
        liveCount++;
        return node;
    }

    /** Frees a node that has no owner left. Its children stay: they are keyed by its sequence hash, not its id. */
    void free(int node) {
        removeFromTable(bySeq, node, seqSlotHash(seqHash(node)));
        bySeqSize--;
        boolean hasParent = hasParent(node);
        int head = childHead(hasParent, parentSeqHash(node), localHash(node));
        if (head == node) {
            int next = nextSameKey(node);
            if (next == NONE) {
                removeFromTable(byChild, node, childSlotHash(hasParent, parentSeqHash(node), localHash(node)));
                byChildSize--;
            } else {
                replaceInTable(byChild, node, next,
                        childSlotHash(hasParent, parentSeqHash(node), localHash(node)));
            }
        } else {
            int prev = head;
            while (nextSameKey(prev) != node) {
                prev = nextSameKey(prev);
            }
            setNextSameKey(prev, nextSameKey(node));
        }
        setFlags(node, 0);
        setFirstOwner(node, NONE);
        setMoreOwners(node, null);
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
                nextSameKey = Arrays.copyOf(nextSameKey, n);
                firstOwner = Arrays.copyOf(firstOwner, n);
                moreOwners = Arrays.copyOf(moreOwners, n);
            }
            hashes[pages] = new long[3 * PAGE];
            flags[pages] = new byte[PAGE];
            nextSameKey[pages] = new int[PAGE];
            firstOwner[pages] = new int[PAGE];
            moreOwners[pages] = new int[PAGE][];
            pages++;
        }
        return highWater++;
    }

    private int firstOwner(int node) {
        return firstOwner[node >>> PAGE_BITS][node & OFFSET_MASK];
    }

    private void setFirstOwner(int node, int code) {
        firstOwner[node >>> PAGE_BITS][node & OFFSET_MASK] = code;
    }

    private int[] moreOwners(int node) {
        return moreOwners[node >>> PAGE_BITS][node & OFFSET_MASK];
    }

    private void setMoreOwners(int node, int[] more) {
        moreOwners[node >>> PAGE_BITS][node & OFFSET_MASK] = more;
    }

    private void setNextSameKey(int node, int next) {
        nextSameKey[node >>> PAGE_BITS][node & OFFSET_MASK] = next;
    }

    private void setFlags(int node, int value) {
        flags[node >>> PAGE_BITS][node & OFFSET_MASK] = (byte) value;
    }

    // ---- lookups ---------------------------------------------------------------------------------------------

    /** The node with this sequence hash, or NONE. */
    int findBySeq(long seq) {
        int mask = bySeq.length - 1;
        for (int i = (int) seqSlotHash(seq) & mask; ; i = (i + 1) & mask) {
            int entry = bySeq[i];
            if (entry == 0) {
                return NONE;
            }
            if (seqHash(entry - 1) == seq) {
                return entry - 1;
            }
        }
    }

    /**
     * The first node whose parent is {@code parentSeq} (or the root when {@code !hasParent}) and whose local hash
     * is {@code local}, or NONE; further ones follow through {@link #nextSameKey}.
     */
    int childHead(boolean hasParent, long parentSeq, long local) {
        int mask = byChild.length - 1;
        for (int i = (int) childSlotHash(hasParent, parentSeq, local) & mask; ; i = (i + 1) & mask) {
            int entry = byChild[i];
            if (entry == 0) {
                return NONE;
            }
            int node = entry - 1;
            // a root node stores parent 0: compare the two hashes (one cache line) before reading the flags
            long[] page = hashes[node >>> PAGE_BITS];
            int at = 3 * (node & OFFSET_MASK);
            if (page[at + LOCAL] == local && page[at + PARENT] == (hasParent ? parentSeq : 0L)
                    && hasParent(node) == hasParent) {
                return node;
            }
        }
    }

    private static long seqSlotHash(long seq) {
        return HashCommon.mix(seq);
    }

    private static long childSlotHash(boolean hasParent, long parentSeq, long local) {
        long parentTerm = hasParent ? HashCommon.mix(parentSeq) : ROOT_KEY_SALT;
        return HashCommon.mix(parentTerm * 31 + local);
    }

    private long slotHashOf(int[] table, int node) {
        return table == bySeq ? seqSlotHash(seqHash(node))
                : childSlotHash(hasParent(node), parentSeqHash(node), localHash(node));
    }

    // ---- open addressing over node ids (entry = node + 1, 0 = empty), linear probing --------------------------

    private void insertBySeq(int node) {
        if ((bySeqSize + 1) * 4L > bySeq.length * 3L) {
            bySeq = rehash(bySeq);
        }
        insert(bySeq, node, seqSlotHash(seqHash(node)));
        bySeqSize++;
    }

    private void insertByChild(int node) {
        if ((byChildSize + 1) * 4L > byChild.length * 3L) {
            byChild = rehash(byChild);
        }
        insert(byChild, node, childSlotHash(hasParent(node), parentSeqHash(node), localHash(node)));
        byChildSize++;
    }

    private static void insert(int[] table, int node, long hash) {
        int mask = table.length - 1;
        int i = (int) hash & mask;
        while (table[i] != 0) {
            i = (i + 1) & mask;
        }
        table[i] = node + 1;
    }

    private int[] rehash(int[] table) {
        boolean seqTable = table == bySeq;
        int[] bigger = new int[table.length * 2];
        for (int entry : table) {
            if (entry != 0) {
                int node = entry - 1;
                insert(bigger, node, seqTable ? seqSlotHash(seqHash(node))
                        : childSlotHash(hasParent(node), parentSeqHash(node), localHash(node)));
            }
        }
        return bigger;
    }

    private static int slotOf(int[] table, int node, long hash) {
        int mask = table.length - 1;
        int i = (int) hash & mask;
        while (table[i] != node + 1) {
            i = (i + 1) & mask;
        }
        return i;
    }

    private static void replaceInTable(int[] table, int node, int replacement, long hash) {
        table[slotOf(table, node, hash)] = replacement + 1;
    }

    /** Backward-shift deletion keeps probe sequences intact without tombstones. */
    private void removeFromTable(int[] table, int node, long hash) {
        int mask = table.length - 1;
        int gap = slotOf(table, node, hash);
        int i = gap;
        while (true) {
            i = (i + 1) & mask;
            int entry = table[i];
            if (entry == 0) {
                break;
            }
            int home = (int) slotHashOf(table, entry - 1) & mask;
            // move the entry into the gap unless its home lies cyclically in (gap, i]
            boolean homeBetween = gap <= i ? (home > gap && home <= i) : (home > gap || home <= i);
            if (!homeBetween) {
                table[gap] = entry;
                gap = i;
            }
        }
        table[gap] = 0;
    }

    /** Heap bytes of the node pages and tables, owner overflow arrays left out (the benchmark's cross-check). */
    long arrayBytes() {
        long perNode = 8L * 3 + 1 + 4 + 4 + 4;
        return perNode * pages * PAGE + 4L * (bySeq.length + byChild.length);
    }
}
