package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.WorkerKey;
import java.util.AbstractList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.RandomAccess;

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
        int[] all = runs.all();
        int[] disk = runs.disk();
        WorkerSlots.Order order = slots.order();
        int[] ordered = order.slots();
        int[] matched = new int[ordered.length]; // positions in the order
        int n = 0;
        if (disk == all) {
            // no external tier in use (PrefixMatcher#match then shares one array for the runs): a lighter pass
            for (int k = 0; k < ordered.length; k++) {
                matched[n] = k;
                n += all[ordered[k]] > 0 ? 1 : 0;
            }
            return new MatchResult(new Matches(order, matched, n, runs), Map.of());
        }
        boolean external = false;
        for (int k = 0; k < ordered.length; k++) {
            int s = ordered[k];
            int depth = all[s];
            matched[n] = k; // kept when matched: no branch to mispredict where matched and unmatched workers mix
            n += depth > 0 ? 1 : 0;
            external |= depth > disk[s];
        }
        Matches list = new Matches(order, matched, n, runs);
        if (!external) {
            return new MatchResult(list, Map.of());
        }
        Map<WorkerKey, Integer> extra = new HashMap<>(); // rare (external tier in use)
        for (int i = 0; i < n; i++) {
            int s = ordered[matched[i]];
            if (all[s] > disk[s]) {
                extra.put(order.workers()[matched[i]], all[s] - disk[s]);
            }
        }
        return new MatchResult(list, extra);
    }

    /**
     * The matched workers as a compact, read-only list: their positions in the shard's worker order (whose slots and
     * workers are shared, immutable arrays), the depths read from the match's per-slot runs; a {@link WorkerMatch}
     * is made only when an element is read. An answer naming 1,024 workers then costs one int array, not 1,024
     * objects or a copy of 1,024 workers, for callers that only count or merge it.
     */
    private static final class Matches extends AbstractList<WorkerMatch> implements RandomAccess {
        private final WorkerSlots.Order order;
        private final int[] matched;
        private final int size;
        private final SlotRuns runs;

        Matches(WorkerSlots.Order order, int[] matched, int size, SlotRuns runs) {
            this.order = order;
            this.matched = matched;
            this.size = size;
            this.runs = runs;
        }

        @Override
        public WorkerMatch get(int i) {
            Objects.checkIndex(i, size);
            int k = matched[i];
            int s = order.slots()[k];
            return new WorkerMatch(order.workers()[k], runs.device()[s], runs.host()[s], runs.all()[s]);
        }

        @Override
        public int size() {
            return size;
        }
    }
}
