package io.kvindexer.indexer.dump;

import io.kvindexer.indexer.common.StorageTier;

/**
 * Dynamo's RouterEvent: the JSON form of one indexed change, used by {@code /dump} and peer recovery
 * (compatibility.md, HTTP API). A dump only ever holds single-block {@link Stored} events; the other kinds are accepted on input.
 *
 * @param instanceId instance id (u64 as a raw 64-bit pattern)
 * @param dpRank   data-parallel rank (u32)
 * @param tier     storage tier ({@code storage_tier}, default device)
 * @param eventId  event id (u64)
 * @param data     what happened
 */
public record RouterEvent(long instanceId, int dpRank, StorageTier tier, long eventId, Data data) {

    /** The externally tagged {@code data} of a RouterEvent. */
    public sealed interface Data permits Stored, Removed, Cleared {}

    /**
     * {@code {"stored": {...}}}: blocks with their engine hash and local (tokens) hash, chained from {@code parentBlockHash}.
     * {@code lastStoreMillis}, our addition for a {@code /dump} (compatibility.md, Where we differ on purpose): when
     * each block was last stored (epoch millis, {@link #NO_TIME} for a block without one), or null when none has one.
     */
    public record Stored(
            boolean hasParent, long parentBlockHash, long[] blockHashes, long[] localHashes, long[] lastStoreMillis)
            implements Data {

        /** A block's entry in {@code lastStoreMillis} when it has no time. */
        public static final long NO_TIME = Long.MIN_VALUE;

        /** Blocks without store times: an engine's event, or a dump entry from a replica without a TTL. */
        public Stored(boolean hasParent, long parentBlockHash, long[] blockHashes, long[] localHashes) {
            this(hasParent, parentBlockHash, blockHashes, localHashes, null);
        }
    }

    /** {@code {"removed": {"block_hashes": [...]}}}. */
    public record Removed(long[] blockHashes) implements Data {}

    /** The bare string {@code "cleared"}. */
    public record Cleared() implements Data {}
}
