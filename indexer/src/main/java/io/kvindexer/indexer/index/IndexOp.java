package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
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
     * @param source           where the store comes from, which decides how much the index trusts it
     */
    record Store(
            StorageTier tier,
            boolean hasParent,
            long parentBlockHash,
            long[] blockHashes,
            long[] localHashes,
            ApplyStatus conversionStatus,
            Source source)
            implements IndexOp {

        /** Where a store comes from. */
        public enum Source {
            /** an engine's {@code Stored} with tokens: on the device tier its parent must be held by the worker */
            ENGINE,
            /** a peer's dump: the peer vouches for the chain, so a device parent need not be held by this worker */
            RECOVERED,
            /**
             * a hash-only store (shared storage): joins blocks the index already holds and creates none (their
             * local hashes come from an engine's store); like a recovered store, it needs no parent
             */
            HASHES_ONLY
        }

        private static final long[] NO_HASHES = new long[0];

        public Store {
            Objects.requireNonNull(tier, "tier");
            Objects.requireNonNull(conversionStatus, "conversionStatus");
            Objects.requireNonNull(source, "source");
            if (blockHashes.length != localHashes.length) {
                throw new IllegalArgumentException(
                        blockHashes.length + " block hashes but " + localHashes.length + " local hashes");
            }
        }

        /** Whether a device-tier store may lack its parent (anything but an engine's own store). */
        public boolean parentOptional() {
            return source != Source.ENGINE;
        }

        public boolean knownBlocksOnly() {
            return source == Source.HASHES_ONLY;
        }

        /** A store of the first {@code n} blocks, marked invalid when that cuts the chain short. */
        static Store prefix(
                StorageTier tier,
                boolean hasParent,
                long parentBlockHash,
                long[] blockHashes,
                long[] localHashes,
                int n,
                Source source) {
            boolean whole = n == blockHashes.length && n == localHashes.length;
            return new Store(
                    tier,
                    hasParent,
                    parentBlockHash,
                    whole ? blockHashes : Arrays.copyOf(blockHashes, n),
                    whole ? localHashes : Arrays.copyOf(localHashes, n),
                    whole ? ApplyStatus.OK : ApplyStatus.INVALID_BLOCK,
                    source);
        }

        /** A store rejected whole: nothing of it is applied, the status is counted. */
        static Store rejected(
                StorageTier tier, boolean hasParent, long parentBlockHash, ApplyStatus status, Source source) {
            return new Store(tier, hasParent, parentBlockHash, NO_HASHES, NO_HASHES, status, source);
        }

        /**
         * A store from a peer's dump, hashes ready-made. A chain that repeats a hash (or its parent) stores
         * nothing; unequal hash counts store the common prefix. Either way the op counts as invalid.
         */
        public static Store recovered(
                StorageTier tier, boolean hasParent, long parentBlockHash, long[] blockHashes, long[] localHashes) {
            if (StoredChainConverter.hasRepeats(blockHashes, hasParent, parentBlockHash)) {
                return rejected(tier, hasParent, parentBlockHash, ApplyStatus.INVALID_BLOCK, Source.RECOVERED);
            }
            int n = Math.min(blockHashes.length, localHashes.length);
            return prefix(tier, hasParent, parentBlockHash, blockHashes, localHashes, n, Source.RECOVERED);
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
