package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.HashCommon;

/**
 * The content prefix hash of a block: {@code prefix(block) = extend(prefix(parent), local)}, and
 * {@code extend(ROOT, local)} for a block without a parent. The index computes it for every block it stores (from
 * the parent node's prefix and the block's local hash), and a query computes the same chain over its own local
 * hashes: arithmetic on the caller's thread, no memory access. So a query can look up every one of its positions
 * at once instead of walking down one dependent lookup at a time (docs/adr/0001-prefix-index.md).
 *
 * <p>{@code extend(p, ·)} is a bijection of the local hash for every {@code p} (a multiply-add, then fastutil's
 * invertible mix), so two blocks under the same parent prefix have equal prefixes exactly when their local hashes are
 * equal: the prefix never merges different content under one parent, and the matcher still checks the parent link.
 */
final class ContentPrefix {

    /** The prefix "before" a root block: an arbitrary odd constant (the fractional digits of sqrt(2)). */
    static final long ROOT = 0x6A09E667F3BCC909L;

    private static final long MULTIPLIER = 0x9E3779B97F4A7C15L;

    private ContentPrefix() {}

    static long extend(long parentPrefix, long local) {
        return HashCommon.mix(parentPrefix * MULTIPLIER + local);
    }

    /** The prefixes of every position of a query: {@code out[i]} = prefix of the chain {@code local[0..i]}. */
    static long[] of(long[] local) {
        long[] out = new long[local.length];
        long p = ROOT;
        for (int i = 0; i < local.length; i++) {
            p = extend(p, local[i]);
            out[i] = p;
        }
        return out;
    }
}
