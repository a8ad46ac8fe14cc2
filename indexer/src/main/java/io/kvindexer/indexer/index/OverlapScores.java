package io.kvindexer.indexer.index;

import java.util.Map;

/**
 * The answer of {@code /query} and {@code /query_by_hash} in tokens (matched blocks × block size), ready to be
 * written as JSON (spec §5.6). Maps are ordered by instance id, then dp rank (unsigned), so output is stable.
 *
 * @param scores    device tier only: instance → (dp rank → tokens), owners with ≥ 1 matched block
 * @param instances per instance, all dp ranks merged (Mooncake RFC #1403 shape)
 */
public record OverlapScores(Map<Long, Map<Integer, Long>> scores, Map<Long, InstanceTiers> instances) {

    /**
     * @param longestMatched max of the three (always equals {@code disk})
     * @param gpu            max over ranks of device tokens
     * @param dp             device tokens per dp rank
     * @param cpu            cumulative through host-pinned
     * @param disk           cumulative through disk and external
     */
    public record InstanceTiers(long longestMatched, long gpu, Map<Integer, Long> dp, long cpu, long disk) {
    }

    /** Builds the response from a match; implemented with the index (core issue). */
    public static OverlapScores of(MatchResult match, int blockSize) {
        throw new UnsupportedOperationException("implemented by the prefix index work");
    }
}
