package io.kvindexer.indexer.index;

/**
 * Two or three membership codes packed into a node's owner word ({@link OwnerSets}): most blocks that are not held
 * by one worker alone are held by two or three, and a list chunk for them cost 16 bytes beside the node (2 B per
 * membership on the conversation trace at 64 engines) and a cache miss on every write and probe that reads it.
 *
 * <p>A packed word is {@code >= }{@link #MIN_WORD} (bit 30 set, sign clear): each code as {@code code + 1} in a
 * {@value #FIELD_BITS}-bit field from the lowest up, 0 for none, so it fits codes up to {@value #MAX_CODE} (slots up
 * to 255). A single code is below {@link #MIN_WORD} (slots stay below 2^28, see {@link WorkerSlots}); lists and
 * bitsets are negative words.
 */
final class PackedOwners {

    static final int MIN_WORD = 1 << 30;
    /** the most codes a packed word holds */
    static final int MAX = 3;

    private static final int FIELD_BITS = 10;
    private static final int FIELD_MASK = (1 << FIELD_BITS) - 1;
    /** the largest code a field holds */
    private static final int MAX_CODE = FIELD_MASK - 1;

    private PackedOwners() {}

    /** How many codes a packed word holds: 2 or 3 (a packed word never holds fewer). */
    static int count(int word) {
        return (word >>> (2 * FIELD_BITS) & FIELD_MASK) != 0 ? 3 : 2;
    }

    /** The i-th code, {@code 0 <= i < count(word)}. */
    static int code(int word, int i) {
        return (word >>> (FIELD_BITS * i) & FIELD_MASK) - 1;
    }

    /** Where the word holds {@code code}, or -1. */
    static int indexOf(int word, int code) {
        if (!fits(code)) {
            return -1;
        }
        int f = code + 1;
        if ((word & FIELD_MASK) == f) {
            return 0;
        }
        if ((word >>> FIELD_BITS & FIELD_MASK) == f) {
            return 1;
        }
        return (word >>> (2 * FIELD_BITS) & FIELD_MASK) == f ? 2 : -1;
    }

    static boolean fits(int code) {
        return code <= MAX_CODE;
    }

    /** Whether {@code codes[0, n)} ({@code 2 <= n <= MAX}) fit one word. */
    static boolean fit(int[] codes, int n) {
        for (int i = 0; i < n; i++) {
            if (!fits(codes[i])) {
                return false;
            }
        }
        return true;
    }

    /** The word holding {@code codes[0, n)} in that order ({@link #fit} checked). */
    static int of(int[] codes, int n) {
        int word = MIN_WORD;
        for (int i = 0; i < n; i++) {
            word |= (codes[i] + 1) << (FIELD_BITS * i);
        }
        return word;
    }

    /** The word with {@code code} appended after its {@code n < MAX} codes ({@link #fits} checked). */
    static int with(int word, int n, int code) {
        return word | (code + 1) << (FIELD_BITS * n);
    }
}
