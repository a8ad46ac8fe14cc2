package io.kvindexer.bench;

import java.util.Arrays;

/** Exact latency percentiles from a plain array of nanosecond samples (HdrHistogram is not needed at this size). */
public final class Latencies {

    private final long[] sorted;

    public Latencies(long[] samples, int count) {
        this.sorted = Arrays.copyOf(samples, count);
        Arrays.sort(sorted);
    }

    public int count() {
        return sorted.length;
    }

    /** The {@code p}-th percentile (0..100) in microseconds, nearest rank; NaN without samples. */
    public double percentileMicros(double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(p / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))] / 1_000.0;
    }
}
