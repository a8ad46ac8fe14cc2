package io.kvindexer.indexer.dump;

import java.util.Objects;

/**
 * One registration as a binary dump or snapshot carries it (version 2 on, {@link BinaryDump}): what {@code /register}
 * was given for one (instance, dp rank), and the seq watermark its listener had reached when the cut was taken, with
 * what the listener knew of the batch at that seq (version 4 on), and whether that seq is a snapshot's no batch has
 * proven since (version 6).
 *
 * @param instanceId     u64 as a raw 64-bit pattern
 * @param dpRank         u32
 * @param replayEndpoint null when the engine has no replay ROUTER
 * @param podName        null when unknown
 * @param watermark      last applied seq (u64); {@code -1} (2^64-1) when no batch was applied yet
 * @param watermarkBatch the batch at {@code watermark}, or null when not known (a version 2 or 3 stream, or a
 *                       listener that had not applied that batch itself)
 * @param fromSnapshot   the watermark was restored from a snapshot (its writer's own, or a peer's dump that said so)
 *                       and no batch of the engine has passed since: nobody may have listened while the engine
 *                       published, and a listener without a replay endpoint is not exact before its engine's next
 *                       batch (docs/concepts.md, exactness); false in a stream before version 6, which a reader
 *                       takes as current, as before
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
        long watermark,
        WatermarkBatch watermarkBatch,
        boolean fromSnapshot) {

    /**
     * The batch a watermark stands at: an XXH3-64 digest of its payload bytes as the engine published them, and the
     * engine's timestamp of it (seconds). After a restart the first replay asks the engine from the watermark: its
     * batch of that seq coming back with other bytes shows another engine process, and a clock-started seq past the
     * timestamp a new one (docs/compatibility.md, "Sequence numbers and replay").
     */
    public record WatermarkBatch(long digest, double timestamp) {}

    public SavedRegistration {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(modelName, "modelName");
        Objects.requireNonNull(tenantId, "tenantId");
    }

    /** A watermark that meets the live stream (not {@link #fromSnapshot}). */
    public SavedRegistration(
            long instanceId,
            int dpRank,
            String endpoint,
            String replayEndpoint,
            String podName,
            String modelName,
            String tenantId,
            int blockSize,
            long watermark,
            WatermarkBatch watermarkBatch) {
        this(
                instanceId,
                dpRank,
                endpoint,
                replayEndpoint,
                podName,
                modelName,
                tenantId,
                blockSize,
                watermark,
                watermarkBatch,
                false);
    }

    /** Without the watermark's batch (nothing known of it). */
    public SavedRegistration(
            long instanceId,
            int dpRank,
            String endpoint,
            String replayEndpoint,
            String podName,
            String modelName,
            String tenantId,
            int blockSize,
            long watermark) {
        this(instanceId, dpRank, endpoint, replayEndpoint, podName, modelName, tenantId, blockSize, watermark, null);
    }
}
