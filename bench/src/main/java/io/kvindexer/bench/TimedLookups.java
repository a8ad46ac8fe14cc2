package io.kvindexer.bench;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.recovery.RouterEventOps;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

/** What the in-process lookup benches share: one engine's store of a chain's blocks, and a timed loop of lookups. */
final class TimedLookups {

    private TimedLookups() {}

    /** Engine {@code engine}'s store of blocks {@code [from, to)} of a chain, under the block before them. */
    static void store(ModelIndex index, int engine, long[] seq, long[] local, int from, int to) {
        RouterEventOps.submit(
                index,
                List.of(new RouterEvent(
                        engine + 1L,
                        0,
                        StorageTier.DEVICE,
                        0,
                        new RouterEvent.Stored(
                                from > 0,
                                from > 0 ? seq[from - 1] : 0,
                                Arrays.copyOfRange(seq, from, to),
                                Arrays.copyOfRange(local, from, to)))));
    }

    /** Looks up {@code queries}' next query for {@code millis}, the first fifth to warm up, and times the rest. */
    static Latencies time(ModelIndex index, Supplier<long[]> queries, int millis) {
        long until = System.nanoTime() + millis * 1_000_000L;
        long measureFrom = System.nanoTime() + millis * 200_000L;
        long[] samples = new long[1 << 16];
        int count = 0;
        long sink = 0;
        while (count < samples.length) {
            long[] query = queries.get();
            long t0 = System.nanoTime();
            if (t0 - until > 0) {
                break;
            }
            sink += index.findMatches(query).workers().size();
            if (t0 - measureFrom > 0) {
                samples[count++] = System.nanoTime() - t0;
            }
        }
        if (sink < 0) {
            throw new AssertionError("unreachable; keeps the lookups from being optimised away");
        }
        return new Latencies(samples, Math.max(count, 1));
    }
}
