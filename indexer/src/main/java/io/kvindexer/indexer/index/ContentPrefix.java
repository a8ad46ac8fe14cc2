package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.HashCommon;

/**
 * The content prefix hash of a block: {@code prefix(block) = extend(prefix(parent), local)}, and
 * {@code extend(ROOT, local)} for a block without a parent. The index computes it for every block it stores (from
 * the parent node's prefix and the block's local hash), and a query computes the same chain over its own local
 * hashes: arithmetic on the caller's thread, no memory access. So a query can look up every one of its positions
 * at once instead of walking down one dependent lookup at a time (docs/adr/0001-prefix-index.md).
 *
 * <p>It is 32 bits wide (the upper half of a node's fourth long; the lower half is the owner word, so a probe that
 * reads a node's prefix has its owners in the same cache line). Different content can share a prefix; the matcher
 * checks every candidate's local hash and parent link, so that costs a comparison, never a wrong match.
 */
final class ContentPrefix {

    /** The prefix "before" a root block: an arbitrary constant (the fractional digits of sqrt(2), upper half). */
    static final int ROOT = 0x6A09E667;

    private static final long MULTIPLIER = 0x9E3779B97F4A7C15L;

    private ContentPrefix() {}

    /**
     * The prefix of a block under {@code parentPrefix} with local hash {@code local}: the upper 32 bits of a mix.
     * 32 bits are enough because the prefix only finds candidates; the matcher checks each candidate's local hash
     * and parent link, so a collision costs a wasted comparison, never a wrong match.
     */
    static int extend(int parentPrefix, long local) {
        return (int) (HashCommon.mix(parentPrefix * MULTIPLIER + local) >>> 32);
    }

    /** The well-mixed 64-bit hash the prefix table files a prefix under (mix is a bijection). */
    static long tableHash(int prefix) {
        return HashCommon.mix(prefix & 0xFFFFFFFFL);
    }
}
