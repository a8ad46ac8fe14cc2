package io.kvindexer.bench;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.index.CacheSurvey;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.IndexWriters;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.recovery.RouterEventOps;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What the web console's two walks cost on a big index: {@code GET /stats} (blocks per worker and tier,
 * {@link CacheSurvey#workerBlocks()}) and {@code GET /prefixes} ({@link CacheSurvey#sharedPrefixes(int)}), in
 * process, without HTTP. The floor, measured in the same run, is one pass that reads one int per block from a plain
 * array of the index's size: no walk over the blocks can do less.
 *
 * <p>Index: sequences of {@code --depth} blocks, the first quarter from one of 4 shared prefix groups, each sequence
 * held by 2 of {@code --workers} workers, until {@code --blocks} distinct blocks; one warm-up, then the median of 3.
 *
 * <p>Run: {@code bin/bench ConsoleStatsBench [--blocks 4000000] [--workers 64] [--depth 32]}
 */
@Command(
        name = "console-stats-bench",
        description = "The web console's /stats and /prefixes walks on a big index, beside a one-int-per-block floor.")
public final class ConsoleStatsBench extends BenchCommand {

    private static final int REPETITIONS = 3;

    @Option(names = "--blocks", description = "distinct blocks in the index")
    int blocks = 4_000_000;

    /** each sequence is held by 2 of the workers */
    @Mixin
    final PrefixGroupShape shape = new PrefixGroupShape();

    public static void main(String[] args) {
        System.exit(new CommandLine(new ConsoleStatsBench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Machine.printBanner("ConsoleStatsBench");
        try (IndexWriters writers = new IndexWriters(2)) {
            ModelIndex index = new ModelIndex("bench", "default", 16, IndexOptions.defaults(), writers);
            long built = build(index, blocks, shape.workers, shape.depth);
            long nodes = index.stats().blocks();
            System.out.printf(
                    Locale.ROOT,
                    "index: %,d blocks, %,d memberships, %d workers (built in %.1f s)%n",
                    nodes,
                    index.stats().memberships(),
                    shape.workers,
                    built / 1e9);

            int[] plain = new int[(int) nodes];
            for (int i = 0; i < plain.length; i++) {
                plain[i] = i;
            }
            long[] sink = new long[1];
            double floor = median(() -> {
                long sum = 0;
                for (int v : plain) {
                    sum += v;
                }
                sink[0] += sum;
                return sum;
            });
            double stats = median(() -> index.survey().workerBlocks().size());
            double prefixes = median(() -> index.survey().sharedPrefixes(20).size());
            long chunks = (nodes + CacheSurvey.CHUNK - 1) / CacheSurvey.CHUNK;
            System.out.printf(Locale.ROOT, "floor (one int per block, plain array): %8.2f ms%n", floor / 1e6);
            System.out.printf(
                    Locale.ROOT,
                    "/stats walk   (workerBlocks):         %8.2f ms  = %6.1f x floor,"
                            + " %.1f ns/block, ~%.2f ms per read-lock chunk (%d chunks)%n",
                    stats / 1e6,
                    stats / floor,
                    stats / nodes,
                    stats / 1e6 / chunks,
                    chunks);
            System.out.printf(
                    Locale.ROOT,
                    "/prefixes walk (sharedPrefixes(20)):  %8.2f ms  = %6.1f x floor," + " %.1f ns/block%n",
                    prefixes / 1e6,
                    prefixes / floor,
                    prefixes / nodes);
            System.out.printf(
                    Locale.ROOT, "(medians of %d after one warm-up; checksum %d)%n", REPETITIONS, sink[0] & 1);
        }
        return 0;
    }

    /** Median wall time in ns of {@link #REPETITIONS} runs after one warm-up. */
    private static double median(LongSupplier run) {
        run.getAsLong();
        List<Long> times = new ArrayList<>();
        for (int r = 0; r < REPETITIONS; r++) {
            long start = System.nanoTime();
            run.getAsLong();
            times.add(System.nanoTime() - start);
        }
        return Medians.of(times, Long::doubleValue);
    }

    private static long build(ModelIndex index, int blocks, int workers, int depth) {
        long start = System.nanoTime();
        SplittableRandom random = new SplittableRandom(42);
        int shared = depth / 4;
        long[][] groupSeq = new long[PrefixGroupShape.PREFIX_GROUPS][shared];
        long[][] groupLocal = new long[PrefixGroupShape.PREFIX_GROUPS][shared];
        for (int g = 0; g < PrefixGroupShape.PREFIX_GROUPS; g++) {
            for (int b = 0; b < shared; b++) {
                groupSeq[g][b] = random.nextLong();
                groupLocal[g][b] = random.nextLong();
            }
        }
        int sequences = Math.max(1, (blocks - PrefixGroupShape.PREFIX_GROUPS * shared) / (depth - shared));
        List<RouterEvent> batch = new ArrayList<>();
        for (int s = 0; s < sequences; s++) {
            int g = s % PrefixGroupShape.PREFIX_GROUPS;
            long[] seq = new long[depth];
            long[] local = new long[depth];
            System.arraycopy(groupSeq[g], 0, seq, 0, shared);
            System.arraycopy(groupLocal[g], 0, local, 0, shared);
            for (int b = shared; b < depth; b++) {
                seq[b] = random.nextLong();
                local[b] = random.nextLong();
            }
            int first = random.nextInt(workers);
            for (int replica = 0; replica < 2; replica++) {
                batch.add(new RouterEvent(
                        (first + replica * (workers / 2)) % workers,
                        0,
                        StorageTier.DEVICE,
                        0,
                        new RouterEvent.Stored(false, 0, seq, local)));
            }
            if (batch.size() >= 4096) {
                RouterEventOps.submit(index, batch);
                batch = new ArrayList<>();
            }
        }
        RouterEventOps.submit(index, batch);
        index.flush().join();
        return System.nanoTime() - start;
    }
}
