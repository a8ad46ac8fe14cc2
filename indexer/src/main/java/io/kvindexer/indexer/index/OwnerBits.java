package io.kvindexer.indexer.index;

import java.util.Arrays;

/**
 * Large owner sets (more than {@link OwnerLists#MAX} codes) as one bitset over worker slots per tier: 1 bit per
 * worker and tier held, and a query step intersects its workers with a set one 64-bit word per 64 workers (see
 * {@link PrefixMatcher}). A set is named by an int id; its tier bitsets are {@code words[id * TIERS + tier]}
 * (null while that tier is empty), each as long as its highest slot needs.
 *
 * <p>Not thread-safe: {@link PrefixIndex} guards it with its lock.
 */
final class OwnerBits {

    private static final int TIERS = MembershipCode.TIERS;
    private static final long[] EMPTY = new long[0];

    private long[][] words = new long[16 * TIERS][];
    private int[] counts = new int[16];
    private final IdPool ids = new IdPool();

    /** A new set holding the {@code n} codes of {@code codes}. */
    int create(int[] codes, int n) {
        int id = ids.take();
        if (id == counts.length) {
            counts = Arrays.copyOf(counts, id * 2);
            words = Arrays.copyOf(words, id * 2 * TIERS);
        }
        counts[id] = 0;
        for (int i = 0; i < n; i++) {
            add(id, codes[i]);
        }
        return id;
    }

    int count(int id) {
        return counts[id];
    }

    /** The tier's bitset (word i holds slots 64i..64i+63), possibly empty; read-only for callers. */
    long[] tier(int id, int tier) {
        long[] bits = words[id * TIERS + tier];
        return bits == null ? EMPTY : bits;
    }

    boolean contains(int id, int code) {
        long[] bits = words[id * TIERS + MembershipCode.tier(code)];
        int slot = MembershipCode.slot(code);
        return bits != null && (slot >>> 6) < bits.length && (bits[slot >>> 6] & 1L << slot) != 0;
    }

    /** Adds a code; false when it was there already. */
    boolean add(int id, int code) {
        int t = id * TIERS + MembershipCode.tier(code);
        int slot = MembershipCode.slot(code);
        long[] bits = words[t];
        if (bits == null || (slot >>> 6) >= bits.length) {
            bits = words[t] = Arrays.copyOf(bits == null ? EMPTY : bits, (slot >>> 6) + 1);
        }
        long bit = 1L << slot;
        if ((bits[slot >>> 6] & bit) != 0) {
            return false;
        }
        bits[slot >>> 6] |= bit;
        counts[id]++;
        return true;
    }

    /** Removes a code; false when it was not there. */
    boolean remove(int id, int code) {
        if (!contains(id, code)) {
            return false;
        }
        int slot = MembershipCode.slot(code);
        words[id * TIERS + MembershipCode.tier(code)][slot >>> 6] &= ~(1L << slot);
        counts[id]--;
        return true;
    }

    /** Writes every code into {@code out} (tier by tier, slots ascending); returns how many. */
    int codes(int id, int[] out) {
        int n = 0;
        for (int tier = 0; tier < TIERS; tier++) {
            long[] bits = words[id * TIERS + tier];
            if (bits == null) {
                continue;
            }
            for (int w = 0; w < bits.length; w++) {
                for (long word = bits[w]; word != 0; word &= word - 1) {
                    out[n++] = MembershipCode.of(w << 6 | Long.numberOfTrailingZeros(word), tier);
                }
            }
        }
        return n;
    }

    /** Provably the same codes: the same count and equal bitsets on every tier (false only means "not proven"). */
    boolean sameCodes(int a, int b) {
        if (counts[a] != counts[b]) {
            return false;
        }
        for (int tier = 0; tier < TIERS; tier++) {
            if (!Arrays.equals(tier(a, tier), tier(b, tier))) {
                return false;
            }
        }
        return true;
    }

    void free(int id) {
        Arrays.fill(words, id * TIERS, id * TIERS + TIERS, null);
        counts[id] = 0;
        ids.release(id);
    }
}
