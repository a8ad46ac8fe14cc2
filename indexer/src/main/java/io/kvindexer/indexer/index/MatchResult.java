package io.kvindexer.indexer.index;

import io.kvindexer.indexer.model.WorkerKey;

import java.util.List;

/**
 * The tiered match of one query against one index, in blocks (spec §4.5–4.6). Only workers with at least one
 * matched block on some tier appear.
 *
 * @param workers one entry per (instance, dp rank) that matched anything
 */
public record MatchResult(List<WorkerMatch> workers) {

    /**
     * Cumulative block counts of one worker: {@code deviceBlocks <= hostBlocks <= diskBlocks}.
     *
     * @param deviceBlocks longest prefix held on the device tier (the legacy {@code scores})
     * @param hostBlocks   device prefix extended through the host-pinned tier
     * @param diskBlocks   that extended through the disk tier, then the external tier
     */
    public record WorkerMatch(WorkerKey worker, int deviceBlocks, int hostBlocks, int diskBlocks) {
    }

    public static MatchResult empty() {
        return new MatchResult(List.of());
    }
}
