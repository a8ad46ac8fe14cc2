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
 * Engines under one hash seed, each decoding many requests at once. vLLM stores a request's block as it fills, one
 * store per block, between every other request's, so a response's blocks arrive one at a time. Each request here has
 * a system prompt all share, a prompt of its own stored at once, and {@code --decode} blocks stored one per step,
 * every request in turn. The lookup of a random request's whole sequence (what its next turn asks) is timed on that
 * fleet and, in the same repetition, on the same requests stored each in one store: the ratio is what stores of one
 * block at a time cost the lookup.
 */
@Command(
        name = "decode-bench",
        description = "Lookup cost when requests' decode blocks are stored one at a time, between other requests'.")
public final class DecodeBench extends RepeatedBench<DecodeBench.Rep> {

    /** blocks of the system prompt every request starts with, and of each request's own prompt */
    private static final int SYSTEM = 16;

    private static final int OWN = 16;

    @Option(names = "--engines", description = "engines, each with its share of the requests")
    int engines = 64;

    @Option(names = "--requests", split = ",", description = "requests decoding at once per engine, one point each")
    int[] requests = {4, 16, 64};

    @Option(names = "--decode", description = "decode blocks per request, stored one per step")
    int decode = 32;

    @Option(names = "--lookup-millis", description = "time spent on each point's lookups, per fleet and repetition")
    int lookupMillis = 500;

    /** One point in one repetition: lookup p50 and p99 (µs) with decode blocks stored one at a time, and at once. */
    public record Point(
            int requests, double decodedP50Us, double decodedP99Us, double atOnceP50Us, double atOnceP99Us) {}

    public record Rep(List<Point> points) {}

    public static void main(String[] args) {
        System.exit(new CommandLine(new DecodeBench()).execute(args));
    }

    @Override
    public List<Rep> runBench() throws Indexers.BlockSizeMismatchException {
        List<Rep> reps = new ArrayList<>();
        for (int r = 0; r < runs.repetitions; r++) {
            List<Point> points = new ArrayList<>();
            for (int perEngine : requests) {
                long[][] local = requestBlocks(engines * perEngine);
                long[][] seq = sequences(local);
                Latencies decoded = fleet(seq, local, true);
                Latencies atOnce = fleet(seq, local, false);
                Point p = new Point(
                        perEngine,
                        decoded.percentileMicros(50),
                        decoded.percentileMicros(99),
                        atOnce.percentileMicros(50),
                        atOnce.percentileMicros(99));
                System.out.printf(
                        "rep %d, %d engines x %d requests: lookup p50/p99 %.2f/%.2f us decoded a block at a time,"
                                + " %.2f/%.2f us stored at once (x%.2f)%n",
                        r + 1,
                        engines,
                        perEngine,
                        p.decodedP50Us(),
                        p.decodedP99Us(),
                        p.atOnceP50Us(),
                        p.atOnceP99Us(),
                        p.decodedP50Us() / p.atOnceP50Us());
                points.add(p);
            }
            reps.add(new Rep(points));
        }
        return reps;
    }

    /** Every request's local hashes: the shared system prompt, then content of its own. */
    private long[][] requestBlocks(int count) {
        SplittableRandom random = new SplittableRandom(29);
        long[][] local = new long[count][SYSTEM + OWN + decode];
        for (long[] request : local) {
            for (int i = 0; i < request.length; i++) {
                request[i] = i < SYSTEM ? i + 1 : random.nextLong();
            }
        }
        return local;
    }

    /** Every request's block hashes, chained under the one seed. */
    private static long[][] sequences(long[][] local) {
        long[][] seq = new long[local.length][];
        for (int q = 0; q < local.length; q++) {
            seq[q] = new long[local[q].length];
            for (int i = 0; i < local[q].length; i++) {
                seq[q][i] = SequenceHasher.next(i == 0 ? 0L : seq[q][i - 1], local[q][i]);
            }
        }
        return seq;
    }

    /** Builds the fleet's index, then times lookups of random requests' sequences for {@link #lookupMillis}. */
    private Latencies fleet(long[][] seq, long[][] local, boolean oneAtATime)
            throws Indexers.BlockSizeMismatchException {
        int count = local.length;
        int blocks = local[0].length;
        try (Indexers indexers = new Indexers(IndexOptions.defaults())) {
            ModelIndex index = indexers.getOrCreate("decode-model", Tenants.DEFAULT, 16);
            int atOnce = oneAtATime ? SYSTEM + OWN : blocks;
            for (int q = 0; q < count; q++) {
                TimedLookups.store(index, q % engines, seq[q], local[q], 0, atOnce);
            }
            for (int i = atOnce; i < blocks; i++) {
                for (int q = 0; q < count; q++) {
                    TimedLookups.store(index, q % engines, seq[q], local[q], i, i + 1);
                }
            }
            index.flush().join();
            int matched = index.findMatches(local[count - 1]).workers().stream()
                    .mapToInt(w -> w.deviceBlocks())
                    .max()
                    .orElse(0);
            if (matched != blocks) {
                throw new IllegalStateException("the lookup matches " + matched + " blocks, expected " + blocks);
            }
            SplittableRandom pick = new SplittableRandom(31);
            return TimedLookups.time(index, () -> local[pick.nextInt(count)], lookupMillis);
        }
    }

    @Override
    void summarize(List<Rep> reps, Map<String, Object> out) {
        out.put("engines", engines);
        out.put("decode", decode);
        List<Map<String, Object>> points = new ArrayList<>();
        for (int k = 0; k < requests.length; k++) {
            int at = k;
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("requests_per_engine", requests[k]);
            p.put("decoded_p50_us", Medians.of(reps, r -> r.points().get(at).decodedP50Us()));
            p.put("decoded_p99_us", Medians.of(reps, r -> r.points().get(at).decodedP99Us()));
            p.put("at_once_p50_us", Medians.of(reps, r -> r.points().get(at).atOnceP50Us()));
            p.put("at_once_p99_us", Medians.of(reps, r -> r.points().get(at).atOnceP99Us()));
            p.put(
                    "decoded_over_at_once_p50",
                    Medians.of(
                            reps,
                            r -> r.points().get(at).decodedP50Us()
                                    / r.points().get(at).atOnceP50Us()));
            points.add(p);
        }
        out.put("points", points);
        out.putAll(Machine.toJson());
    }
}
