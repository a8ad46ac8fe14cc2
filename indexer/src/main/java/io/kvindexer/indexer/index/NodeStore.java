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

    private long[] seqHash;
    private long[] parentSeqHash;
    private long[] localHash;
    private byte[] flags;
    private int[] nextSameKey;
    /** the first owner, inline (most blocks have one owner per tier); NONE when the node is free */
    private int[] firstOwner;
    /** further owners: {@code [count, o1, o2, ...]}, null while there is at most one owner */
    private int[][] moreOwners;

    private int highWater;
    private int[] freeIds = new int[16];
    private int freeCount;
    private int liveCount;

    private int[] bySeq;
    private int bySeqSize;
    private int[] byChild;
    private int byChildSize;

    NodeStore() {
        int capacity = 1024;
        seqHash = new long[capacity];
        parentSeqHash = new long[capacity];
        localHash = new long[capacity];
        flags = new byte[capacity];
        nextSameKey = new int[capacity];
        firstOwner = new int[capacity];
        moreOwners = new int[capacity][];
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
        return (flags[node] & LIVE) != 0;
    }

    long seqHash(int node) {
        return seqHash[node];
    }

    long localHash(int node) {
        return localHash[node];
    }

    boolean hasParent(int node) {
        return (flags[node] & HAS_PARENT) != 0;
    }

    long parentSeqHash(int node) {
        return parentSeqHash[node];
    }

    int nextSameKey(int node) {
        return nextSameKey[node];
    }

    // ---- owners (membership codes slot << 2 | tier) -----------------------------------------------------------

    int ownerCount(int node) {
        if (firstOwner[node] == NONE) {
            return 0;
        }
        int[] more = moreOwners[node];
        return more == null ? 1 : 1 + more[0];
    }

    int ownerAt(int node, int i) {
        return i == 0 ? firstOwner[node] : moreOwners[node][i];
    }

    boolean hasOwner(int node, int code) {
        if (firstOwner[node] == code) {
            return true;
        }
        int[] more = moreOwners[node];
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
        if (firstOwner[node] == NONE) {
            firstOwner[node] = code;
            return true;
        }
        int[] more = moreOwners[node];
        if (more == null) {
            more = new int[4];
        } else if (more[0] + 1 == more.length) {
            more = Arrays.copyOf(more, more.length + (more.length >> 1));
        }
        more[++more[0]] = code;
        moreOwners[node] = more;
        return true;
    }

    /** Removes an owner; false when it was not there. */
    boolean removeOwner(int node, int code) {
        int[] more = moreOwners[node];
        if (firstOwner[node] == code) {
            if (more == null) {
                firstOwner[node] = NONE;
            } else {
                firstOwner[node] = more[more[0]];
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
            moreOwners[node] = null;
        } else if (more.length > 8 && more[0] < more.length / 4) {
            moreOwners[node] = Arrays.copyOf(more, more[0] + 1 + (more[0] >> 1) + 1);
        }
    }

    // ---- create / free -------------------------------------------------------------------------------------

    /** Creates a node (the caller checked that no node has this sequence hash). */
    int create(long seq, boolean hasParent, long parentSeq, long local) {
        int node = freeCount > 0 ? freeIds[--freeCount] : newId();
        seqHash[node] = seq;
        parentSeqHash[node] = hasParent ? parentSeq : 0L;
        localHash[node] = local;
        flags[node] = (byte) (LIVE | (hasParent ? HAS_PARENT : 0));
        firstOwner[node] = NONE;
        moreOwners[node] = null;
        insertBySeq(node);
        int head = childHead(hasParent, parentSeq, local);
        if (head == NONE) {
            nextSameKey[node] = NONE;
            insertByChild(node);
        } else {
            // append behind the head so the head slot stays valid
            nextSameKey[node] = nextSameKey[head];
            nextSameKey[head] = node;
        }
        liveCount++;
        return node;
    }

    /** Frees a node that has no owner left. Its children stay: they are keyed by its sequence hash, not its id. */
    void free(int node) {
        removeFromTable(bySeq, node, seqSlotHash(seqHash[node]));
        bySeqSize--;
        boolean hasParent = hasParent(node);
        int head = childHead(hasParent, parentSeqHash[node], localHash[node]);
        if (head == node) {
            int next = nextSameKey[node];
            if (next == NONE) {
                removeFromTable(byChild, node, childSlotHash(hasParent, parentSeqHash[node], localHash[node]));
                byChildSize--;
            } else {
                replaceInTable(byChild, node, next,
                        childSlotHash(hasParent, parentSeqHash[node], localHash[node]));
            }
        } else {
            int prev = head;
            while (nextSameKey[prev] != node) {
                prev = nextSameKey[prev];
            }
            nextSameKey[prev] = nextSameKey[node];
        }
        flags[node] = 0;
        firstOwner[node] = NONE;
        moreOwners[node] = null;
        if (freeCount == freeIds.length) {
            freeIds = Arrays.copyOf(freeIds, freeCount * 2);
        }
        freeIds[freeCount++] = node;
        liveCount--;
    }

    private int newId() {
        if (highWater == seqHash.length) {
            int capacity = highWater + (highWater >> 1);
            seqHash = Arrays.copyOf(seqHash, capacity);
            parentSeqHash = Arrays.copyOf(parentSeqHash, capacity);
            localHash = Arrays.copyOf(localHash, capacity);
            flags = Arrays.copyOf(flags, capacity);
            nextSameKey = Arrays.copyOf(nextSameKey, capacity);
            firstOwner = Arrays.copyOf(firstOwner, capacity);
            moreOwners = Arrays.copyOf(moreOwners, capacity);
        }
        return highWater++;
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
            if (seqHash[entry - 1] == seq) {
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
            if (localHash[node] == local && hasParent(node) == hasParent
                    && (!hasParent || parentSeqHash[node] == parentSeq)) {
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
        return table == bySeq ? seqSlotHash(seqHash[node])
                : childSlotHash(hasParent(node), parentSeqHash[node], localHash[node]);
    }

    // ---- open addressing over node ids (entry = node + 1, 0 = empty), linear probing --------------------------

    private void insertBySeq(int node) {
        if ((bySeqSize + 1) * 4L > bySeq.length * 3L) {
            bySeq = rehash(bySeq);
        }
        insert(bySeq, node, seqSlotHash(seqHash[node]));
        bySeqSize++;
    }

    private void insertByChild(int node) {
        if ((byChildSize + 1) * 4L > byChild.length * 3L) {
            byChild = rehash(byChild);
        }
        insert(byChild, node, childSlotHash(hasParent(node), parentSeqHash[node], localHash[node]));
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
                insert(bigger, node, seqTable ? seqSlotHash(seqHash[node])
                        : childSlotHash(hasParent(node), parentSeqHash[node], localHash[node]));
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

    /** Approximate heap bytes held (arrays only), for the benchmark's cross-check. */
    long arrayBytes() {
        long perNode = 8L * 3 + 1 + 4 + 4 + 4;
        return perNode * seqHash.length + 4L * (bySeq.length + byChild.length);
    }
}
