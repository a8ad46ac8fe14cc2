package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.ints.IntArrayList;

import java.util.Arrays;

/**
 * The owners of every block node: per node a set of membership codes ({@link MembershipCode}), paged by node id
 * like {@link NodeStore}'s other fields.
 *
 * <p>One int per node: the owner's code itself when there is exactly one (most blocks), {@link #NO_OWNER}, or
 * {@code ~i} for entry i of a shared table of owner lists ({@code [count, o1, ..., o_count]}, recycled through a
 * free list). Not thread-safe: {@link PrefixIndex} guards it with its lock.
 */
final class OwnerSets {

    static final int NONE = -1;
    private static final int NO_OWNER = Integer.MIN_VALUE;

    private int[][] ownerWord = new int[16][];
    private int[][] ownerLists = new int[1024][];
    private int ownerListsUsed;
    private final IntArrayList freeOwnerLists = new IntArrayList();

    /** Makes room for nodes of page {@code page} (see {@link NodeStore#PAGE_BITS}). */
    void addPage(int page) {
        if (page == ownerWord.length) {
            ownerWord = Arrays.copyOf(ownerWord, page * 2);
        }
        ownerWord[page] = new int[NodeStore.PAGE];
    }

    /** Forgets a node's owners (a new or freed node). */
    void reset(int node) {
        setWord(node, NO_OWNER);
    }

    int count(int node) {
        int word = word(node);
        return word >= 0 ? 1 : word == NO_OWNER ? 0 : ownerLists[~word][0];
    }

    /** The owner when there is exactly one, else NONE (then see {@link #list}). */
    int single(int node) {
        int word = word(node);
        return word >= 0 ? word : NONE;
    }

    /** {@code [count, o1, ..., o_count]} when there are two owners or more, else null; read-only for callers. */
    int[] list(int node) {
        int word = word(node);
        return word >= 0 || word == NO_OWNER ? null : ownerLists[~word];
    }

    /** The i-th owner, {@code 0 <= i < count(node)}; order changes when owners are removed. */
    int at(int node, int i) {
        int word = word(node);
        return word >= 0 ? word : ownerLists[~word][i + 1];
    }

    boolean contains(int node, int code) {
        int word = word(node);
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
    boolean add(int node, int code) {
        int word = word(node);
        if (word == NO_OWNER) {
            setWord(node, code);
            return true;
        }
        if (word >= 0) {
            if (word == code) {
                return false;
            }
            setWord(node, ~newList(new int[] {2, word, code, 0}));
            return true;
        }
        if (contains(node, code)) {
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
    boolean remove(int node, int code) {
        int word = word(node);
        if (word >= 0 || word == NO_OWNER) {
            if (word != code) {
                return false;
            }
            setWord(node, NO_OWNER);
            return true;
        }
        int index = ~word;
        int[] list = ownerLists[index];
        for (int i = 1, end = list[0]; i <= end; i++) {
            if (list[i] == code) {
                list[i] = list[end];
                list[0]--;
                if (list[0] == 1) {
                    setWord(node, list[1]);
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

    /**
     * Removes every owner whose slot is flagged in {@code slots}, counting the removed ones per tier ordinal into
     * {@code removedPerTier}.
     */
    void removeSlots(int node, boolean[] slots, long[] removedPerTier) {
        for (int i = count(node) - 1; i >= 0; i--) {
            int code = at(node, i);
            int slot = MembershipCode.slot(code);
            if (slot < slots.length && slots[slot]) {
                remove(node, code);
                removedPerTier[MembershipCode.tier(code)]++;
            }
        }
    }

    private int newList(int[] list) {
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

    private int word(int node) {
        return ownerWord[node >>> NodeStore.PAGE_BITS][node & NodeStore.OFFSET_MASK];
    }

    private void setWord(int node, int word) {
        ownerWord[node >>> NodeStore.PAGE_BITS][node & NodeStore.OFFSET_MASK] = word;
    }
}
