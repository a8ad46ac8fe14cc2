package io.kvindexer.indexer.http;

import io.kvindexer.indexer.index.MatchResult;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

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

    /** Builds the response from a match: blocks × block size, ranks of one instance merged by max (compatibility.md, Index semantics). */
    public static OverlapScores of(MatchResult match, int blockSize) {
        Map<Long, Map<Integer, Long>> scores = new TreeMap<>(Long::compareUnsigned);
        Map<Long, Map<Integer, Long>> dp = new TreeMap<>(Long::compareUnsigned);
        Map<Long, long[]> maxima = new TreeMap<>(Long::compareUnsigned); // gpu, cpu, disk
        for (MatchResult.WorkerMatch m : match.workers()) {
            long instance = m.worker().instanceId();
            int rank = m.worker().dpRank();
            long gpu = (long) m.deviceBlocks() * blockSize;
            long cpu = (long) m.hostBlocks() * blockSize;
            long disk = (long) m.diskBlocks() * blockSize;
            if (m.deviceBlocks() > 0) {
                scores.computeIfAbsent(instance, k -> new TreeMap<>(Integer::compareUnsigned))
                        .put(rank, gpu);
            }
            dp.computeIfAbsent(instance, k -> new TreeMap<>(Integer::compareUnsigned))
                    .put(rank, gpu);
            long[] max = maxima.computeIfAbsent(instance, k -> new long[3]);
            max[0] = Math.max(max[0], gpu);
            max[1] = Math.max(max[1], cpu);
            max[2] = Math.max(max[2], disk);
        }
        Map<Long, InstanceTiers> instances = new TreeMap<>(Long::compareUnsigned);
        maxima.forEach((instance, max) -> {
            long longest = Math.max(max[0], Math.max(max[1], max[2]));
            instances.put(
                    instance,
                    new InstanceTiers(longest, max[0], Collections.unmodifiableMap(dp.get(instance)), max[1], max[2]));
        });
        scores.replaceAll((instance, ranks) -> Collections.unmodifiableMap(ranks));
        return new OverlapScores(Collections.unmodifiableMap(scores), Collections.unmodifiableMap(instances));
    }
}
