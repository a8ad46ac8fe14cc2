package io.kvindexer.indexer.http;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.MatchResult;
import io.kvindexer.indexer.index.MatchResult.WorkerMatch;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The answer of {@code /query} and {@code /query_by_hash} in tokens (matched blocks × block size), ready to be
 * written as JSON (compatibility.md, HTTP API). Maps are ordered by instance id, then dp rank (unsigned), so output is stable.
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
    public record InstanceTiers(long longestMatched, long gpu, Map<Integer, Long> dp, long cpu, long disk) {}

    private static final Comparator<WorkerMatch> BY_WORKER = Comparator.comparing(WorkerMatch::worker, WorkerKey.ORDER);

    /**
     * Builds the response from a match: blocks × block size, ranks of one instance merged by max (compatibility.md,
     * Index semantics). The match lists its workers in answer order already ({@link WorkerKey#ORDER}), so each
     * instance is one run of the list and the maps are filled in order, not sorted (a list built otherwise is
     * sorted first).
     */
    public static OverlapScores of(MatchResult match, int blockSize) {
        WorkerMatch[] workers = inOrder(match);
        Map<Long, Map<Integer, Long>> scores = new LinkedHashMap<>();
        Map<Long, InstanceTiers> instances = new LinkedHashMap<>();
        for (int from = 0, to; from < workers.length; from = to) {
            long instance = workers[from].worker().instanceId();
            to = from + 1;
            while (to < workers.length && workers[to].worker().instanceId() == instance) {
                to++;
            }
            Map<Integer, Long> dp = ranks(workers, from, to, blockSize, false);
            long gpu = 0;
            long cpu = 0;
            long disk = 0;
            boolean allOnDevice = true;
            for (int i = from; i < to; i++) {
                WorkerMatch m = workers[i];
                gpu = Math.max(gpu, (long) m.deviceBlocks() * blockSize);
                cpu = Math.max(cpu, (long) m.hostBlocks() * blockSize);
                disk = Math.max(disk, (long) m.diskBlocks() * blockSize);
                allOnDevice &= m.deviceBlocks() > 0;
            }
            if (gpu > 0) {
                scores.put(instance, allOnDevice ? dp : ranks(workers, from, to, blockSize, true));
            }
            instances.put(instance, new InstanceTiers(Math.max(gpu, Math.max(cpu, disk)), gpu, dp, cpu, disk));
        }
        return new OverlapScores(Collections.unmodifiableMap(scores), Collections.unmodifiableMap(instances));
    }

    /** Device tokens per rank of the workers in {@code [from, to)}; with {@code deviceOnly}, of those with any. */
    private static Map<Integer, Long> ranks(
            WorkerMatch[] workers, int from, int to, int blockSize, boolean deviceOnly) {
        if (to - from == 1) {
            return Map.of(workers[from].worker().dpRank(), (long) workers[from].deviceBlocks() * blockSize);
        }
        Map<Integer, Long> ranks = new LinkedHashMap<>();
        for (int i = from; i < to; i++) {
            if (!deviceOnly || workers[i].deviceBlocks() > 0) {
                ranks.put(workers[i].worker().dpRank(), (long) workers[i].deviceBlocks() * blockSize);
            }
        }
        return Collections.unmodifiableMap(ranks);
    }

    private static WorkerMatch[] inOrder(MatchResult match) {
        WorkerMatch[] workers = match.workers().toArray(WorkerMatch[]::new);
        for (int i = 1; i < workers.length; i++) {
            if (BY_WORKER.compare(workers[i - 1], workers[i]) > 0) {
                Arrays.sort(workers, BY_WORKER);
                break;
            }
        }
        return workers;
    }
}
