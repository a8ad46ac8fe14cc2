package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.WorkerKey;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The tiered match of one query against one index, in blocks ({@code docs/concepts.md}, "Tiered match"). Only
 * workers with at least one matched block on some tier appear.
 *
 * @param workers        one entry per (instance, dp rank) that matched anything, ordered by instance id, then dp
 *                       rank (unsigned)
 * @param externalBlocks per worker, how many of its {@code diskBlocks} the external tier added (absent: none);
 *                       {@code /query_tiered_by_hash} reports the disk and external tiers apart
 */
public record MatchResult(List<WorkerMatch> workers, Map<WorkerKey, Integer> externalBlocks) {

    public MatchResult {
        externalBlocks = Map.copyOf(externalBlocks);
    }

    /** A match without external-tier blocks. */
    public MatchResult(List<WorkerMatch> workers) {
        this(workers, Map.of());
    }

    /** Blocks the external tier added to this worker's run. */
    public int externalBlocks(WorkerKey worker) {
        return externalBlocks.getOrDefault(worker, 0);
    }

    /**
     * Cumulative block counts of one worker: {@code deviceBlocks <= hostBlocks <= diskBlocks}.
     *
     * @param deviceBlocks longest prefix held on the device tier (the legacy {@code scores})
     * @param hostBlocks   device prefix extended through the host-pinned tier
     * @param diskBlocks   that extended through the disk tier, then the external tier
     */
    public record WorkerMatch(WorkerKey worker, int deviceBlocks, int hostBlocks, int diskBlocks) {}

    public static MatchResult empty() {
        return new MatchResult(List.of());
    }

    /** The answer from a shard's per-slot runs: the workers with a matched block, in {@link WorkerKey#ORDER}. */
    static MatchResult of(SlotRuns runs, WorkerSlots slots) {
        int matched = 0;
        int[] all = runs.all();
        for (int run : all) {
            if (run > 0) {
                matched++;
            }
        }
        MatchResult.WorkerMatch[] out = new MatchResult.WorkerMatch[matched];
        Map<WorkerKey, Integer> external = null; // rare (external tier in use): allocated on first need
        int k = 0;
        for (int s : slots.inWorkerOrder()) {
            if (all[s] > 0) {
                WorkerKey worker = slots.worker(s);
                out[k++] = new MatchResult.WorkerMatch(worker, runs.device()[s], runs.host()[s], all[s]);
                if (all[s] > runs.disk()[s]) {
                    if (external == null) {
                        external = new HashMap<>();
                    }
                    external.put(worker, all[s] - runs.disk()[s]);
                }
            }
        }
        return new MatchResult(
                Collections.unmodifiableList(Arrays.asList(out)), external == null ? Map.of() : external);
    }
}
