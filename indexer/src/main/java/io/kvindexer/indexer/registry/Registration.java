package io.kvindexer.indexer.registry;

/**
 * One {@code /register} request (or {@code --workers} entry) after JSON decoding.
 *
 * @param instanceId     u64 as a raw 64-bit pattern
 * @param replayEndpoint null when the engine has no replay ROUTER
 */
public record Registration(long instanceId, String endpoint, String modelName, String tenantId, int blockSize,
                           int dpRank, String replayEndpoint) {
}
