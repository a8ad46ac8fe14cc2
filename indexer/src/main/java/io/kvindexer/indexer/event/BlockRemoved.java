package io.kvindexer.indexer.event;

import io.kvindexer.indexer.common.StorageTier;

/**
 * Blocks evicted by the engine.
 *
 * @param blockHashes engine sequence hashes (raw 64-bit patterns)
 * @param tier        storage tier from the event's {@code medium}
 */
public record BlockRemoved(long[] blockHashes, StorageTier tier) implements KvEvent {}
