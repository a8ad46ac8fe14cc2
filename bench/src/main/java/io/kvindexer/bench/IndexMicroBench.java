package io.kvindexer.bench;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.hash.BlockHasher;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.IndexWriters;
import io.kvindexer.indexer.index.MatchResult;
import io.kvindexer.indexer.index.ModelIndex;
import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Single-thread micro benchmark of the prefix index (no JMH: a main class that prints figures).
 *
 * <p>Shape after Dynamo's radix_tree_microbench: sequences of {@code depth} blocks, the first quarter from one
 * of 4 shared prefix groups, the rest unique; each sequence cached by {@code replicas} of {@code workers} workers.
 * Prints the cost of applying stored blocks (one writer thread), of a lookup (hit, partial, miss), of removing
 * blocks, the bytes per membership (heap after GC minus the heap before building) and a "floor" measured in the
 * same process: hashing the query's tokens plus one hash-map probe per block.
 *
 * <p>Run: {@code BENCH_JAVA_OPTS=-Xmx6g bin/bench IndexMicroBench [--memberships 1000000] [--workers 64]
 * [--depth 32] [--replicas 1,8]}
 */
@Command(
        name = "index-micro-bench",
        description =
                "Single-thread micro benchmark of the prefix index: apply, lookups, removes, bytes per membership.")
public final class IndexMicroBench extends BenchCommand {

    private static final int BLOCK_SIZE = 16;

    @Option(names = "--memberships", description = "memberships to build (about)")
    int memberships = 1_000_000;

    @Mixin
    final PrefixGroupShape shape = new PrefixGroupShape();

    @Option(names = "--replicas", split = ",", description = "workers caching each sequence; one run per value")
    int[] replicasPerRun = {1, 8};

    /** the run's replicas and random source: each run starts from the same seed, as a fresh process would */
    private int replicas;

    private SplittableRandom random;

    private long[][] seqHashes;
    private long[][] localHashes;
    private int[][] owners;

    public static void main(String[] args) {
        System.exit(new CommandLine(new IndexMicroBench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Machine.printBanner("IndexMicroBench");
        for (int r : replicasPerRun) {
            replicas = r;
            random = new SplittableRandom(42);
            run();
        }
        return 0;
    }

    private void run() throws Exception {
        // the shared prefix blocks are held once per worker, so size the corpus by its unique blocks
        int sequences = memberships / (shape.depth - shape.depth / 4) / replicas;
        System.out.printf(
                Locale.ROOT,
                "%n== ~%,d memberships: %,d sequences x %d blocks (first %d shared by prefix "
                        + "group) x %d replica(s), %d workers, block size %d ==%n",
                memberships,
                sequences,
                shape.depth,
                shape.depth / 4,
                replicas,
                shape.workers,
                BLOCK_SIZE);
        generate(sequences);
        long baseline = usedHeapAfterGc();

        try (IndexWriters writers = new IndexWriters(1)) {
            ModelIndex index = new ModelIndex("bench", "default", BLOCK_SIZE, IndexOptions.defaults(), writers);
            long start = System.nanoTime();
            int chunk = 1024;
            for (int s = 0; s < sequences; s += chunk) {
                io.kvindexer.indexer.recovery.RouterEventOps.submit(
                        index, storedEvents(s, Math.min(sequences, s + chunk)));
            }
            index.flush().join();
            long applyNanos = System.nanoTime() - start;
            long blocks = (long) sequences * shape.depth * replicas;
            System.out.printf(
                    Locale.ROOT,
                    "apply stored     : %,.0f ns/block (%,d blocks in %d-block events, one "
                            + "writer thread, incl. queue hand-off and JIT warm-up)%n",
                    (double) applyNanos / blocks,
                    blocks,
                    shape.depth);

            long used = usedHeapAfterGc() - baseline;
            var stats = index.stats();
            System.out.printf(
                    Locale.ROOT,
                    "memory           : %,d bytes for %,d memberships / %,d blocks = %.1f B per "
                            + "membership, %.1f B per block%n",
                    used,
                    stats.memberships(),
                    stats.blocks(),
                    (double) used / stats.memberships(),
                    (double) used / stats.blocks());

            lookups(index);
            floor();
            for (int w = 0; w < 3; w++) { // the first scans run before the JIT has compiled the scan
                long t0 = System.nanoTime();
                index.removeInstance(owners[owners.length - 1 - w][0]).join();
                System.out.printf(
                        Locale.ROOT,
                        "remove a worker  : %,.1f ms (a scan of %,d blocks, write lock taken "
                                + "per 16k-node chunk)%n",
                        (System.nanoTime() - t0) / 1e6,
                        index.stats().blocks());
            }
            removals(index, writers);
        }
    }

    private void generate(int sequences) {
        long[][] prefixSeq = new long[PrefixGroupShape.PREFIX_GROUPS][shape.depth / 4];
        long[][] prefixLocal = new long[PrefixGroupShape.PREFIX_GROUPS][shape.depth / 4];
        for (int g = 0; g < PrefixGroupShape.PREFIX_GROUPS; g++) {
            for (int i = 0; i < shape.depth / 4; i++) {
                prefixSeq[g][i] = random.nextLong();
                prefixLocal[g][i] = random.nextLong();
            }
        }
        seqHashes = new long[sequences][shape.depth];
        localHashes = new long[sequences][shape.depth];
        owners = new int[sequences][replicas];
        for (int s = 0; s < sequences; s++) {
            int g = s % PrefixGroupShape.PREFIX_GROUPS;
            for (int i = 0; i < shape.depth; i++) {
                boolean shared = i < shape.depth / 4;
                seqHashes[s][i] = shared ? prefixSeq[g][i] : random.nextLong();
                localHashes[s][i] = shared ? prefixLocal[g][i] : random.nextLong();
            }
            int first = random.nextInt(shape.workers);
            for (int r = 0; r < replicas; r++) {
                owners[s][r] = (first + r) % shape.workers;
            }
        }
    }

    private List<RouterEvent> storedEvents(int from, int to) {
        List<RouterEvent> events = new ArrayList<>();
        for (int s = from; s < to; s++) {
            for (int owner : owners[s]) {
                events.add(new RouterEvent(
                        owner,
                        0,
                        StorageTier.DEVICE,
                        0,
                        new RouterEvent.Stored(false, 0, seqHashes[s], localHashes[s])));
            }
        }
        return events;
    }

    private void lookups(ModelIndex index) {
        int n = 200_000;
        long[][] hit = new long[1024][];
        long[][] partial = new long[1024][];
        long[][] miss = new long[1024][];
        for (int i = 0; i < hit.length; i++) {
            long[] q = localHashes[random.nextInt(localHashes.length)];
            hit[i] = q;
            partial[i] = q.clone();
            partial[i][shape.depth / 2] = random.nextLong();
            miss[i] = q.clone();
            miss[i][0] = random.nextLong();
        }
        for (int round = 0; round < 2; round++) { // the first round warms the JIT up
            boolean report = round == 1;
            time(index, hit, n, report ? "lookup hit       " : null);
            time(index, partial, n, report ? "lookup partial   " : null);
            time(index, miss, n, report ? "lookup miss      " : null);
        }
    }

    private void time(ModelIndex index, long[][] queries, int n, String label) {
        long[] samples = new long[n];
        long sink = 0;
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            MatchResult r = index.findMatches(queries[i & (queries.length - 1)]);
            samples[i] = System.nanoTime() - t0;
            sink += r.workers().size();
        }
        if (label == null) {
            return;
        }
        Arrays.sort(samples);
        double mean = Arrays.stream(samples).average().orElse(0);
        System.out.printf(
                Locale.ROOT,
                "%s: mean %,.0f ns, p50 %,d ns, p99 %,d ns (%d-block query, %.1f workers " + "matched on average)%n",
                label,
                mean,
                samples[n / 2],
                samples[n * 99 / 100],
                shape.depth,
                (double) sink / n);
    }

    /** Hash the query's tokens and probe a hash map once per block: what any index must at least do. */
    private void floor() {
        Long2IntOpenHashMap map = new Long2IntOpenHashMap();
        for (long[] seq : localHashes) {
            for (long h : seq) {
                map.put(h, 1);
            }
        }
        int[] tokens = new int[shape.depth * BLOCK_SIZE];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = random.nextInt(50_000);
        }
        int n = 200_000;
        long sink = 0;
        long elapsed = 0;
        for (int round = 0; round < 2; round++) {
            long start = System.nanoTime();
            for (int i = 0; i < n; i++) {
                tokens[0] = i;
                long[] hashes = BlockHasher.localHashes(tokens, BLOCK_SIZE, BlockHasher.BASE_SEED);
                long[] probe = localHashes[i % localHashes.length];
                for (int b = 0; b < hashes.length; b++) {
                    sink += map.get(probe[b] ^ (hashes[b] & 1));
                }
            }
            elapsed = System.nanoTime() - start;
        }
        System.out.printf(
                Locale.ROOT,
                "floor            : %,.0f ns per query (hash %d tokens + %d map probes)" + " [%d]%n",
                (double) elapsed / n,
                tokens.length,
                shape.depth,
                sink & 1);
    }

    private void removals(ModelIndex index, IndexWriters writers) {
        int count = Math.min(localHashes.length, 20_000);
        List<RouterEvent> events = new ArrayList<>();
        for (int s = 0; s < count; s++) {
            for (int owner : owners[s]) {
                events.add(new RouterEvent(owner, 0, StorageTier.DEVICE, 0, new RouterEvent.Removed(seqHashes[s])));
            }
        }
        long blocks = (long) count * shape.depth * replicas;
        long start = System.nanoTime();
        io.kvindexer.indexer.recovery.RouterEventOps.submit(index, events);
        index.flush().join();
        long nanos = System.nanoTime() - start;
        System.out.printf(
                Locale.ROOT, "apply removed    : %,.0f ns/block (%,d blocks)%n", (double) nanos / blocks, blocks);
    }

    private static long usedHeapAfterGc() throws InterruptedException {
        var memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
