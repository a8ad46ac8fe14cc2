package io.kvindexer.bench;

import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;

/**
 * The least a lookup can cost: one primitive hash-map probe per query block, on a map holding every stored block's
 * local hash (as many entries as the index has blocks, so it misses the caches about as much). Timed per query
 * like {@code findMatches} in {@link Replay}, on precomputed local hashes, in the same process and run: the
 * per-query floor that the worker sweep sets the lookup latency against.
 */
public final class ProbeFloor {

    private ProbeFloor() {}

    public static Latencies run(Workload workload) {
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
                long t0 = System.nanoTime();
                for (long h : hashes) {
                    sink += map.get(h);
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
