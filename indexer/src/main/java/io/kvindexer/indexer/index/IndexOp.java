package io.kvindexer.indexer.index;

import io.kvindexer.indexer.model.StorageTier;
import java.util.Arrays;
import java.util.Objects;

/**
 * One change to one worker's memberships: the only form in which writes enter an index. Engine events
 * ({@link StoredChainConverter}) and recovered {@code /dump} content (package {@code recovery}) both become these
 * three operations; hashing happens before, on the caller's thread, never under the index lock. Names follow
 * {@code docs/concepts.md}.
 */
public sealed interface IndexOp {

    /**
     * A chain of blocks stored on one tier.
     *
     * @param blockHashes      the engine's block hashes, oldest first
     * @param localHashes      the matching local (tokens) hashes, one per block hash
     * @param parentBlockHash  the block before {@code blockHashes[0]}; meaningful only when {@code hasParent}
     * @param conversionStatus OK, or why the event was cut short or rejected before it reached the index
     * @param parentOptional   true for recovered stores: a peer's dump vouches for the chain, so a device parent
     *                         need not be held by this worker
     * @param knownBlocksOnly  a hash-only store (shared storage): joins blocks the index already holds, creates
     *                         none (their local hashes come from an engine's store)
     */
    record Store(
            StorageTier tier,
            boolean hasParent,
            long parentBlockHash,
            long[] blockHashes,
            long[] localHashes,
            ApplyStatus conversionStatus,
            boolean parentOptional,
            boolean knownBlocksOnly)
            implements IndexOp {

        private static final long[] NO_HASHES = new long[0];

        public Store {
            Objects.requireNonNull(tier, "tier");
            Objects.requireNonNull(conversionStatus, "conversionStatus");
            if (blockHashes.length != localHashes.length) {
                throw new IllegalArgumentException(
                        blockHashes.length + " block hashes but " + localHashes.length + " local hashes");
            }
        }

        public Store(
                StorageTier tier,
                boolean hasParent,
                long parentBlockHash,
                long[] blockHashes,
                long[] localHashes,
                ApplyStatus conversionStatus,
                boolean parentOptional) {
            this(tier, hasParent, parentBlockHash, blockHashes, localHashes, conversionStatus, parentOptional, false);
        }

        /**
         * A store from a peer's dump, hashes ready-made. A chain that repeats a hash (or its parent) stores
         * nothing; unequal hash counts store the common prefix. Either way the op counts as invalid.
         */
        public static Store recovered(
                StorageTier tier, boolean hasParent, long parentBlockHash, long[] blockHashes, long[] localHashes) {
            if (StoredChainConverter.hasRepeats(blockHashes, hasParent, parentBlockHash)) {
                return new Store(
                        tier, hasParent, parentBlockHash, NO_HASHES, NO_HASHES, ApplyStatus.INVALID_BLOCK, true);
            }
            int n = Math.min(blockHashes.length, localHashes.length);
            if (n == blockHashes.length && n == localHashes.length) {
                return new Store(tier, hasParent, parentBlockHash, blockHashes, localHashes, ApplyStatus.OK, true);
            }
            return new Store(
                    tier,
                    hasParent,
                    parentBlockHash,
                    Arrays.copyOf(blockHashes, n),
                    Arrays.copyOf(localHashes, n),
                    ApplyStatus.INVALID_BLOCK,
                    true);
        }
    }

    /** Blocks evicted from one tier, by block hash. */
    record Remove(StorageTier tier, long[] blockHashes) implements IndexOp {

        public Remove {
            Objects.requireNonNull(tier, "tier");
            Objects.requireNonNull(blockHashes, "blockHashes");
        }
    }

    /** The worker's whole cache is gone, on every tier. */
    record Clear() implements IndexOp {}
}
