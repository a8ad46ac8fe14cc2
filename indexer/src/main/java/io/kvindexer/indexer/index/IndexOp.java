package io.kvindexer.indexer.index;

import io.kvindexer.indexer.model.StorageTier;

/**
 * One change to apply to a {@link PrefixIndex} for one worker, already hashed (hashing happens on the caller's
 * thread, never under the index lock).
 */
sealed interface IndexOp {

    /**
     * A chain of blocks stored on one tier.
     *
     * @param seqHashes         engine sequence hashes, oldest first
     * @param localHashes       the matching local (tokens) hashes
     * @param conversionStatus  OK, or why the event was cut short / rejected while converting it
     * @param parentOptional    true for recovered (peer dump) stores: a device parent need not be held
     * @param knownBlocksOnly   a hash-only store (shared storage): joins blocks the index already holds, creates
     *                          none (their local hashes come from an engine's store)
     */
    record Store(StorageTier tier, boolean hasParent, long parentSeqHash, long[] seqHashes, long[] localHashes,
                 ApplyStatus conversionStatus, boolean parentOptional, boolean knownBlocksOnly) implements IndexOp {

        Store(StorageTier tier, boolean hasParent, long parentSeqHash, long[] seqHashes, long[] localHashes,
              ApplyStatus conversionStatus, boolean parentOptional) {
            this(tier, hasParent, parentSeqHash, seqHashes, localHashes, conversionStatus, parentOptional, false);
        }
    }

    /** Blocks evicted from one tier, by sequence hash. */
    record Remove(StorageTier tier, long[] seqHashes) implements IndexOp {
    }

    /** The worker's whole cache is gone, on every tier. */
    record Clear() implements IndexOp {
    }
}
