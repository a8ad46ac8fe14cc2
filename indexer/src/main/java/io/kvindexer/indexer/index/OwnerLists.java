package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.ints.IntArrayList;

/**
 * Small owner sets (2 to {@link #MAX} membership codes) packed into one int arena: no object per set, so a block
 * with a few owners costs a few ints instead of an array header and a reference. A list is a chunk of
 * {@code 4 << cls} ints ({@code cls} 0..4, so 4 to 64 ints) holding {@code [header, c1, ..., c_count]} with
 * {@code header = cls << 16 | count}; freed chunks are reused per size class. A chunk is named by its offset
 * divided by 4 (chunks are 4-int aligned), which leaves room for 2^30 chunks.
 *
 * <p>Not thread-safe: {@link PrefixIndex} guards it with its lock.
 */
final class OwnerLists {

    /** the most codes a list holds (the largest chunk, minus its header) */
    static final int MAX = 63;

    private static final int CLASSES = 5;
    private static final int PAGE_BITS = 13; // 32 KB pages: little unused tail
    private static final int PAGE = 1 << PAGE_BITS;
    private static final int PAGE_MASK = PAGE - 1;

    private int[][] pages = new int[16][];
    private long top;
    private final IntArrayList[] free = new IntArrayList[CLASSES];

    OwnerLists() {
        for (int c = 0; c < CLASSES; c++) {
            free[c] = new IntArrayList();
        }
    }

    /** A new list holding {@code n} codes from {@code codes} ({@code 1 <= n <= MAX}). */
    int create(int[] codes, int n) {
        int list = allocate(classFor(n));
        int[] page = page(list);
        int at = offset(list);
        for (int i = 0; i < n; i++) {
            page[at + 1 + i] = codes[i];
        }
        page[at] = (page[at] & ~0xFFFF) | n;
        return list;
    }

    int count(int list) {
        return page(list)[offset(list)] & 0xFFFF;
    }

    /** The i-th code, {@code 0 <= i < count(list)}. */
    int at(int list, int i) {
        return page(list)[offset(list) + 1 + i];
    }

    boolean contains(int list, int code) {
        int[] page = page(list);
        int at = offset(list);
        for (int i = at + 1, end = at + 1 + (page[at] & 0xFFFF); i < end; i++) {
            if (page[i] == code) {
                return true;
            }
        }
        return false;
    }

    /**
     * Appends a code that is not in the list yet; returns the list's (possibly new) name, or -1 when it already
     * holds {@link #MAX} codes (the caller switches to {@link OwnerBits}).
     */
    int append(int list, int code) {
        int[] page = page(list);
        int at = offset(list);
        int header = page[at];
        int count = header & 0xFFFF;
        int cls = header >>> 16;
        if (count + 1 < 4 << cls) {
            page[at + 1 + count] = code;
            page[at] = header + 1;
            return list;
        }
        if (cls == CLASSES - 1) {
            return -1;
        }
        int bigger = moveTo(list, cls + 1);
        page = page(bigger);
        at = offset(bigger);
        page[at + 1 + count] = code;
        page[at]++;
        return bigger;
    }

    /** Removes a code (swapping the last one in); returns the list's (possibly new) name, or -1 when absent. */
    int remove(int list, int code) {
        int[] page = page(list);
        int at = offset(list);
        int count = page[at] & 0xFFFF;
        for (int i = at + 1, end = at + count; i <= end; i++) {
            if (page[i] == code) {
                page[i] = page[end];
                page[at]--;
                int cls = page[at] >>> 16;
                // shrink when a quarter full, so a list that grew once does not keep its chunk forever
                return cls > 0 && count - 1 < (4 << cls) / 4 ? moveTo(list, classFor(count - 1)) : list;
            }
        }
        return -1;
    }

    /** Whether two lists hold the same codes in the same order (one vectorised compare). */
    boolean sameCodes(int a, int b) {
        int[] pageA = page(a);
        int[] pageB = page(b);
        int atA = offset(a);
        int atB = offset(b);
        int count = pageA[atA] & 0xFFFF;
        return count == (pageB[atB] & 0xFFFF)
                && java.util.Arrays.equals(pageA, atA + 1, atA + 1 + count, pageB, atB + 1, atB + 1 + count);
    }

    void free(int list) {
        free[page(list)[offset(list)] >>> 16].add(list);
    }

    private int moveTo(int list, int cls) {
        int[] from = page(list);
        int at = offset(list);
        int count = from[at] & 0xFFFF;
        int moved = allocate(cls);
        int[] to = page(moved);
        int dst = offset(moved);
        System.arraycopy(from, at + 1, to, dst + 1, count);
        to[dst] = cls << 16 | count;
        free(list);
        return moved;
    }

    private static int classFor(int codes) {
        int cls = 0;
        while (codes + 1 > 4 << cls) {
            cls++;
        }
        return cls;
    }

    private int allocate(int cls) {
        IntArrayList reusable = free[cls];
        int list;
        if (!reusable.isEmpty()) {
            list = reusable.popInt();
        } else {
            int size = 4 << cls;
            if ((top & PAGE_MASK) + size > PAGE) {
                top = (top | PAGE_MASK) + 1; // a chunk never straddles two pages
            }
            int p = (int) (top >>> PAGE_BITS);
            if (p == pages.length) {
                pages = java.util.Arrays.copyOf(pages, p * 2);
            }
            if (pages[p] == null) {
                pages[p] = new int[PAGE];
            }
            list = (int) (top >>> 2);
            top += size;
        }
        page(list)[offset(list)] = cls << 16;
        return list;
    }

    /**
     * {@code out[w] |= in[w] & bit(slot)} for every code of the list on {@code tier}, w being the slot's word: the
     * list half of {@link OwnerSets#intersect}, reading the list's ints in one pass. {@code in} must be zero outside
     * the words the caller cares about, and as long as the highest slot needs.
     */
    void intersect(int list, int tier, long[] in, long[] out) {
        int[] page = page(list);
        int at = offset(list);
        // no branch on the word range: in is zero outside [lo, hi), so those words of out stay zero
        for (int i = at + 1, end = at + 1 + (page[at] & 0xFFFF); i < end; i++) {
            int code = page[i];
            int slot = MembershipCode.slot(code);
            long bit = (MembershipCode.tier(code) == tier ? 1L : 0L) << slot;
            out[slot >>> 6] |= in[slot >>> 6] & bit;
        }
    }

    private int[] page(int list) {
        return pages[list >>> (PAGE_BITS - 2)];
    }

    private static int offset(int list) {
        return (list << 2) & PAGE_MASK;
    }
}
