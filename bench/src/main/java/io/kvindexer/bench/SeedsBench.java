package io.kvindexer.bench;

import io.kvindexer.indexer.common.Tenants;
import io.kvindexer.indexer.hash.SequenceHasher;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Engines whose hash seeds differ (vLLM draws its root hash at random per process unless {@code PYTHONHASHSEED} is
 * set): every engine holds the same prompt under its own block hashes, so the index has a node per engine at every
 * position. The prompt's first {@code --prefill} blocks are stored by each engine at once, the rest one block per
 * engine step, the engines in turn (decode), so those blocks are not in line. The lookup of the whole prompt is timed
 * on that fleet and, in the same repetition, on the same fleet with one shared seed (the same blocks under the same
 * hashes): the ratio is what differing seeds cost. Both answers name every engine.
 */
@Command(
        name = "seeds-bench",
        description = "Lookup cost when every engine hashes the same prompt with its own seed, vs one shared seed.")
public final class SeedsBench extends RepeatedBench<SeedsBench.Rep> {

    @Option(names = "--engines", split = ",", description = "engine counts, one point each")
    int[] engines = {16, 64, 256, 1024};

    @Option(names = "--blocks", description = "prompt length in blocks")
    int blocks = 64;

    @Option(names = "--prefill", description = "blocks each engine stores at once; the rest one per step, in turn")
    int prefill = 32;

    @Option(names = "--lookup-millis", description = "time spent on each point's lookups, per fleet and repetition")
    int lookupMillis = 500;

    /** One fleet size in one repetition: lookup p50 and p99 (µs) with a seed per engine and with one seed. */
    public record Point(int engines, double ownP50Us, double ownP99Us, double sharedP50Us, double sharedP99Us) {}

    public record Rep(List<Point> points) {}

    public static void main(String[] args) {
        System.exit(new CommandLine(new SeedsBench()).execute(args));
    }

    @Override
    public List<Rep> runBench() throws Indexers.BlockSizeMismatchException {
        SplittableRandom random = new SplittableRandom(23);
        long[] local = new long[blocks];
        for (int i = 0; i < blocks; i++) {
            local[i] = random.nextLong();
        }
        List<Rep> reps = new ArrayList<>();
        for (int r = 0; r < runs.repetitions; r++) {
            List<Point> points = new ArrayList<>();
            for (int n : engines) {
                Latencies own = fleet(n, local, true);
                Latencies shared = fleet(n, local, false);
                Point p = new Point(
                        n,
                        own.percentileMicros(50),
                        own.percentileMicros(99),
                        shared.percentileMicros(50),
                        shared.percentileMicros(99));
                System.out.printf(
                        "rep %d, %d engines: lookup p50/p99 %.1f/%.1f us with a seed each, %.1f/%.1f us with one"
                                + " (x%.2f)%n",
                        r + 1,
                        n,
                        p.ownP50Us(),
                        p.ownP99Us(),
                        p.sharedP50Us(),
                        p.sharedP99Us(),
                        p.ownP50Us() / p.sharedP50Us());
                points.add(p);
            }
            reps.add(new Rep(points));
        }
        return reps;
    }

    /** Builds the fleet's index, then times lookups of the whole prompt for {@link #lookupMillis}. */
    private Latencies fleet(int n, long[] local, boolean seedEach) throws Indexers.BlockSizeMismatchException {
        try (Indexers indexers = new Indexers(IndexOptions.defaults())) {
            ModelIndex index = indexers.getOrCreate("seeds-model", Tenants.DEFAULT, 16);
            long[][] seq = new long[n][blocks];
            for (int e = 0; e < n; e++) {
                long seed = seedEach ? e + 1L : 0L;
                for (int i = 0; i < blocks; i++) {
                    // chained from the seed, as an engine's root hash: the same content, other hashes per seed
                    seq[e][i] = SequenceHasher.next(i == 0 ? seed : seq[e][i - 1], local[i]);
                }
            }
            int stored = Math.min(prefill, blocks);
            for (int e = 0; e < n; e++) {
                TimedLookups.store(index, e, seq[e], local, 0, stored);
            }
            for (int i = stored; i < blocks; i++) {
                for (int e = 0; e < n; e++) {
                    TimedLookups.store(index, e, seq[e], local, i, i + 1);
                }
            }
            index.flush().join();
            int named = index.findMatches(local).workers().size();
            if (named != n) {
                throw new IllegalStateException("the lookup names " + named + " engines, expected " + n);
            }
            return TimedLookups.time(index, () -> local, lookupMillis);
        }
    }

    @Override
    void summarize(List<Rep> reps, Map<String, Object> out) {
        out.put("blocks", blocks);
        out.put("prefill", prefill);
        List<Map<String, Object>> points = new ArrayList<>();
        for (int k = 0; k < engines.length; k++) {
            int at = k;
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("engines", engines[k]);
            p.put("own_seed_p50_us", Medians.of(reps, r -> r.points().get(at).ownP50Us()));
            p.put("own_seed_p99_us", Medians.of(reps, r -> r.points().get(at).ownP99Us()));
            p.put("shared_seed_p50_us", Medians.of(reps, r -> r.points().get(at).sharedP50Us()));
            p.put("shared_seed_p99_us", Medians.of(reps, r -> r.points().get(at).sharedP99Us()));
            p.put(
                    "own_over_shared_p50",
                    Medians.of(
                            reps,
                            r -> r.points().get(at).ownP50Us()
                                    / r.points().get(at).sharedP50Us()));
            points.add(p);
        }
        out.put("points", points);
        out.putAll(Machine.toJson());
    }
}
