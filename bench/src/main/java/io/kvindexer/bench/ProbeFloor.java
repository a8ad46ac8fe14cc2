package io.kvindexer.bench;

import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;

/**
 * The least a lookup can cost: one primitive hash-map probe per query block, on a map holding every stored block's
 * local hash (as many entries as the index has blocks, so it misses the caches about as much). Timed per query
 * like {@code findMatches} in {@link Replay}, on precomputed local hashes, in the same process and run: the
 * per-query floor that the worker sweep sets the lookup latency against.
 *
 * <p>The <em>answer floor</em> adds what any answer costs: one (worker, depth) entry written for every worker the
 * real answer names (a fresh {@code long[]} per query, one long per worker), so a lookup that must name 1,024
 * workers is held against a floor that names them too.
 */
public final class ProbeFloor {

    private ProbeFloor() {}

    public static Latencies run(Workload workload) {
        return run(workload, null);
    }

    /**
     * @param named per query (in op order), how many workers the real answer names; null for the bare probe floor
     */
    public static Latencies run(Workload workload, int[] named) {
        long[][] local = workload.localHashes();
        Workload.Op[] ops = workload.ops();
        Long2LongOpenHashMap map = new Long2LongOpenHashMap();
        for (int k = 0; k < ops.length; k++) {
            if (ops[k].kind() == Workload.Kind.STORED) {
                for (long h : local[k]) {
                    map.put(h, k);
                }
            }
        }
        long[] samples = new long[ops.length];
        int n = 0;
        long sink = 0;
        for (int k = 0; k < ops.length; k++) {
            if (ops[k].kind() == Workload.Kind.QUERY) {
                long[] hashes = local[k];
                int answer = named == null ? -1 : named[n];
                long t0 = System.nanoTime();
                for (long h : hashes) {
                    sink += map.get(h);
                }
                if (answer >= 0) {
                    long[] entries = new long[answer];
                    for (int w = 0; w < answer; w++) {
                        entries[w] = (long) w << 32 | (sink & 0xFFFF);
                    }
                    sink += entries.length == 0 ? 0 : entries[answer - 1];
                }
                samples[n++] = System.nanoTime() - t0;
            }
        }
        if (sink == Long.MIN_VALUE) {
            throw new AssertionError("unreachable; keeps the probes from being optimised away");
        }
        return new Latencies(samples, n);
    }
}
