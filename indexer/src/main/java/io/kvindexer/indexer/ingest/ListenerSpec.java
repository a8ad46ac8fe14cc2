package io.kvindexer.indexer.ingest;

/**
 * What one registration asks a listener to do.
 *
 * @param instanceId     engine instance (u64 as a raw 64-bit pattern)
 * @param dpRank         registered dp rank; a batch's own {@code data_parallel_rank} overrides it
 * @param endpoint       the engine's PUB address (the listener connects)
 * @param replayEndpoint the engine's replay ROUTER address; null when the engine has none
 */
public record ListenerSpec(long instanceId, int dpRank, String endpoint, String replayEndpoint) {}
