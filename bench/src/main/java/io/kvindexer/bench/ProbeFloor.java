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
 *
 * <p>{@link #run} times the queries back to back on one thread, with nothing else running: a warm floor. The
 * <em>paced</em> floor times {@link #probe} in a {@link Replay} instead, at each query's deadline while the writer
 * applies the trace's events, so it pays what the lookup pays for the pacing (a thread that parked, caches that
 * cooled meanwhile) and for sharing the machine with the writer.
 */
public final class ProbeFloor {

    private final Workload workload;
    private final Long2LongOpenHashMap map = new Long2LongOpenHashMap();

    /**
     * A map of every local hash the workload stores (all of them, as the index holds at the end); built once per
     * workload and shared by its warm and paced floors.
     */
    public ProbeFloor(Workload workload) {
        this.workload = workload;
        long[][] local = workload.localHashes();
        Workload.Op[] ops = workload.ops();
        for (int k = 0; k < ops.length; k++) {
            if (ops[k].kind() == Workload.Kind.STORED) {
                for (long h : local[k]) {
                    map.put(h, k);
                }
            }
        }
    }

    /**
     * The warm floor: every query back to back on this thread.
     *
     * @param named per query (in op order), how many workers the real answer names; null for the bare probe floor
     */
    public Latencies run(int[] named) {
        long[][] local = workload.localHashes();
        Workload.Op[] ops = workload.ops();
        long[] samples = new long[ops.length];
        int n = 0;
        long sink = 0;
        for (int k = 0; k < ops.length; k++) {
            if (ops[k].kind() == Workload.Kind.QUERY) {
                long t0 = System.nanoTime();
                sink += probe(local[k], named == null ? -1 : named[n]);
                samples[n++] = System.nanoTime() - t0;
            }
        }
        if (sink == Long.MIN_VALUE) {
            throw new AssertionError("unreachable; keeps the probes from being optimised away");
        }
        return new Latencies(samples, n);
    }

    /**
     * One query's floor: a probe per block, then {@code answer} entries (none when negative). Returns a sum of what
     * it read, for the caller to keep.
     */
    long probe(long[] hashes, int answer) {
        long s = 0;
        for (long h : hashes) {
            s += map.get(h);
        }
        if (answer >= 0) {
            long[] entries = new long[answer];
            for (int w = 0; w < answer; w++) {
                entries[w] = (long) w << 32 | (s & 0xFFFF);
            }
            s += answer == 0 ? 0 : entries[answer - 1];
        }
        return s;
    }
}
