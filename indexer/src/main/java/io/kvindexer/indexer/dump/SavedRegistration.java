package io.kvindexer.indexer.dump;

import java.util.Objects;

/**
 * One registration as a binary dump or snapshot carries it (version 2, {@link BinaryDump}): what {@code /register}
 * was given for one (instance, dp rank), and the seq watermark its listener had reached when the cut was taken.
 *
 * @param instanceId     u64 as a raw 64-bit pattern
 * @param dpRank         u32
 * @param replayEndpoint null when the engine has no replay ROUTER
 * @param podName        null when unknown
 * @param watermark      last applied seq (u64); {@code -1} (2^64-1) when no batch was applied yet
 */
public record SavedRegistration(
        long instanceId,
        int dpRank,
        String endpoint,
        String replayEndpoint,
        String podName,
        String modelName,
        String tenantId,
        int blockSize,
        long watermark) {

    public SavedRegistration {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(modelName, "modelName");
        Objects.requireNonNull(tenantId, "tenantId");
    }
}
