package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.HashCommon;
import it.unimi.dsi.fastutil.ints.IntArrayList;

import java.util.Arrays;

/**
 * The block nodes of one prefix index, as struct-of-arrays indexed by an int node id (no object per node).
 *
 * <p>A node is one engine block: its SEQUENCE hash (the engine's opaque chained hash, unique key), the sequence
 * hash of its parent (if any), its LOCAL hash (XXH3 of its tokens, what queries carry) and its owners: membership
 * codes {@code slot << 2 | tier}. Two open-addressing tables hold node ids only (4 bytes a slot) and read the keys
 * back from the node arrays: one by sequence hash, one by (parent sequence hash, local hash) for walking down from
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
    private static final int NO_OWNER = Integer.MIN_VALUE;

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
    /**
     * One int per node for its owners: the owner's code itself when there is exactly one (most blocks, per tier),
     * {@link #NO_OWNER}, or {@code ~i} for entry i of {@link #ownerLists} ({@code [count, o1, ..., o_count]}).
     */
    private int[][] ownerWord = new int[16][];
    private int[][] ownerLists = new int[1024][];
    private int ownerListsUsed;
    private final IntArrayList freeOwnerLists = new IntArrayList();
    private int pages;

    private int highWater;
    private int[] freeIds = new int[16];
    private int freeCount;
    private int liveCount;

    private int[] bySeq;
    private int bySeqSize;
    /** entries {@code fingerprint << 32 | (node + 1)}, 0 = empty */
    private long[] byChild;
    private int byChildSize;

    NodeStore() {
        bySeq = new int[1024];
        byChild = new long[1024];
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

    // ---- owners (membership codes slot << 2 | tier) -----------------------------------------------------------

    int ownerCount(int node) {
        int word = ownerWord(node);
        return word >= 0 ? 1 : word == NO_OWNER ? 0 : ownerLists[~word][0];
    }

    /** The owner when there is exactly one, else NONE (then see {@link #ownerList}). */
    int singleOwner(int node) {
        int word = ownerWord(node);
        return word >= 0 ? word : NONE;
    }

    /** {@code [count, o1, ..., o_count]} when there are two owners or more, else null; read-only for callers. */
    int[] ownerList(int node) {
        int word = ownerWord(node);
        return word >= 0 || word == NO_OWNER ? null : ownerLists[~word];
    }

    int ownerAt(int node, int i) {
        int word = ownerWord(node);
        return word >= 0 ? word : ownerLists[~word][i + 1];
    }

    boolean hasOwner(int node, int code) {
        int word = ownerWord(node);
        if (word >= 0 || word == NO_OWNER) {
            return word == code;
        }
        int[] list = ownerLists[~word];
        for (int i = 1, end = list[0]; i <= end; i++) {
            if (list[i] == code) {
                return true;
            }
        }
        return false;
    }

    /** Adds an owner; false when it was already there. */
    boolean addOwner(int node, int code) {
        int word = ownerWord(node);
        if (word == NO_OWNER) {
            setOwnerWord(node, code);
            return true;
        }
        if (word >= 0) {
            if (word == code) {
                return false;
            }
            setOwnerWord(node, ~newOwnerList(new int[] {2, word, code, 0}));
            return true;
        }
        if (hasOwner(node, code)) {
            return false;
        }
        int[] list = ownerLists[~word];
        if (list[0] + 1 == list.length) {
            list = Arrays.copyOf(list, list.length + (list.length >> 1));
            ownerLists[~word] = list;
        }
        list[++list[0]] = code;
        return true;
    }

    /** Removes an owner; false when it was not there. */
    boolean removeOwner(int node, int code) {
        int word = ownerWord(node);
        if (word >= 0 || word == NO_OWNER) {
            if (word != code) {
                return false;
            }
            setOwnerWord(node, NO_OWNER);
            return true;
        }
        int index = ~word;
        int[] list = ownerLists[index];
        for (int i = 1, end = list[0]; i <= end; i++) {
            if (list[i] == code) {
                list[i] = list[end];
                list[0]--;
                if (list[0] == 1) {
                    setOwnerWord(node, list[1]);
                    ownerLists[index] = null;
                    freeOwnerLists.add(index);
                } else if (list.length > 8 && list[0] < list.length / 4) {
                    ownerLists[index] = Arrays.copyOf(list, list[0] + 1 + (list[0] >> 1) + 1);
                }
                return true;
            }
        }
        return false;
    }

    private int newOwnerList(int[] list) {
        int index;
        if (!freeOwnerLists.isEmpty()) {
            index = freeOwnerLists.popInt();
        } else {
            if (ownerListsUsed == ownerLists.length) {
                ownerLists = Arrays.copyOf(ownerLists, ownerListsUsed * 2);
            }
            index = ownerListsUsed++;
        }
        ownerLists[index] = list;
        return index;
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
        setOwnerWord(node, NO_OWNER);
        insertBySeq(node);
        insertByChild(node);
        liveCount++;
        return node;
    }

    /** Frees a node that has no owner left. Its children stay: they are keyed by its sequence hash, not its id. */
    void free(int node) {
        removeFromSeqTable(node);
        removeFromChildTable(node);
        setFlags(node, 0);
        setOwnerWord(node, NO_OWNER);
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
                ownerWord = Arrays.copyOf(ownerWord, n);
            }
            hashes[pages] = new long[3 * PAGE];
            flags[pages] = new byte[PAGE];
            ownerWord[pages] = new int[PAGE];
            pages++;
        }
        return highWater++;
    }

    private int ownerWord(int node) {
        return ownerWord[node >>> PAGE_BITS][node & OFFSET_MASK];
    }

    private void setOwnerWord(int node, int word) {
        ownerWord[node >>> PAGE_BITS][node & OFFSET_MASK] = word;
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
     * Collects into {@code out} (cleared first) every node whose parent is {@code parentSeq} (or the root when
     * {@code !hasParent}) and whose local hash is {@code local}; usually none or one.
     */
    void children(boolean hasParent, long parentSeq, long local, IntArrayList out) {
        out.clear();
        long hash = childSlotHash(hasParent, parentSeq, local);
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
                if (page[at + LOCAL] == local && page[at + PARENT] == (hasParent ? parentSeq : 0L)
                        && hasParent(node) == hasParent) {
                    out.add(node);
                }
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

    private long childSlotHash(int node) {
        return childSlotHash(hasParent(node), parentSeqHash(node), localHash(node));
    }

    // ---- open addressing, linear probing, backward-shift deletion (no tombstones) -----------------------------

    private void insertBySeq(int node) {
        if ((bySeqSize + 1) * 4L > bySeq.length * 3L) {
            int[] bigger = new int[bySeq.length * 2];
            for (int entry : bySeq) {
                if (entry != 0) {
                    placeBySeq(bigger, entry - 1);
                }
            }
            bySeq = bigger;
        }
        placeBySeq(bySeq, node);
        bySeqSize++;
    }

    private void placeBySeq(int[] table, int node) {
        int mask = table.length - 1;
        int i = (int) seqSlotHash(seqHash(node)) & mask;
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

    private void removeFromSeqTable(int node) {
        int mask = bySeq.length - 1;
        int gap = (int) seqSlotHash(seqHash(node)) & mask;
        while (bySeq[gap] != node + 1) {
            gap = (gap + 1) & mask;
        }
        for (int i = (gap + 1) & mask; bySeq[i] != 0; i = (i + 1) & mask) {
            int home = (int) seqSlotHash(seqHash(bySeq[i] - 1)) & mask;
            if (!cyclicallyBetween(home, gap, i)) {
                bySeq[gap] = bySeq[i];
                gap = i;
            }
        }
        bySeq[gap] = 0;
        bySeqSize--;
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
