package io.kvindexer.bench;

import io.helidon.webserver.WebServer;
import io.kvindexer.bench.ClosedLoop.Load;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.Tenants;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.recovery.RouterEventOps;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * One very long prompt against a fleet that holds it to different depths (issue 19's "long prompt": 240,000 tokens
 * at block size 64 = 3,750 blocks, 96 workers, worker w holding the first (w + 1) / 96 of it). Reports the lookup
 * itself ({@code findMatches} on the prompt's local hashes, in process) and the {@code /query_by_hash} round trip
 * of a real indexer, next to a same-run no-op endpoint that reads and parses the same body
 * ({@link NoopQueryServer}). Medians of the repetitions; the lookup also as CPU time per lookup (thread CPU time
 * over all of a repetition's lookups), which a loaded machine's descheduling does not inflate.
 */
@Command(
        name = "long-prompt-bench",
        description = "One long prompt held to 96 different depths: lookup time and /query_by_hash vs a no-op.")
public final class LongPromptBench extends RepeatedBench<LongPromptBench.Rep> {

    private static final String MODEL = "long-prompt-model";
    /** the lookups' CPU time, which a loaded machine's descheduling does not inflate */
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    @Option(names = "--tokens", description = "prompt length in tokens")
    int tokens = 240_000;

    @Option(names = "--block-size", description = "tokens per block")
    int blockSize = 64;

    @Option(names = "--workers", description = "workers, each holding a different depth of the prompt")
    int workers = 96;

    @Option(names = "--lookups", description = "in-process lookups timed per repetition")
    int lookups = 2_000;

    @Mixin
    final ClosedLoopOptions http = new ClosedLoopOptions(1, 4, 2, 4);

    /** One repetition: in-process lookup percentiles (µs), and the two HTTP targets. */
    public record Rep(
            double lookupP50Us, double lookupP99Us, double lookupCpuUs, ClosedLoop.Load byHash, ClosedLoop.Load noop) {}

    public static void main(String[] args) {
        System.exit(new CommandLine(new LongPromptBench()).execute(args));
    }

    @Override
    public List<Rep> runBench() throws Exception {
        int blocks = tokens / blockSize;
        SplittableRandom random = new SplittableRandom(19);
        long[] local = new long[blocks];
        long[] seq = new long[blocks];
        for (int i = 0; i < blocks; i++) {
            local[i] = random.nextLong() >>> 1; // JSON bodies carry them as non-negative numbers
            seq[i] = random.nextLong();
        }
        byte[] body = body(local);
        System.out.printf(
                "%d tokens = %d blocks of %d, %d workers at depths %d..%d, body %d bytes%n",
                tokens, blocks, blockSize, workers, depth(0, blocks), depth(workers - 1, blocks), body.length);
        List<Rep> reps = new ArrayList<>();
        WebServer noop = NoopQueryServer.start();
        try (IndexerApp app = IndexerApp.start("--port", "0", "--max-query-tokens", Integer.toString(tokens))) {
            ModelIndex index = app.indexers().getOrCreate(MODEL, Tenants.DEFAULT, blockSize);
            for (int w = 0; w < workers; w++) {
                int d = depth(w, blocks);
                RouterEventOps.submit(
                        index,
                        List.of(new RouterEvent(
                                w + 1L,
                                0,
                                StorageTier.DEVICE,
                                0,
                                new RouterEvent.Stored(
                                        false,
                                        0,
                                        java.util.Arrays.copyOf(seq, d),
                                        java.util.Arrays.copyOf(local, d)))));
            }
            index.flush().join();
            int named = index.findMatches(local).workers().size();
            if (named != workers) {
                throw new IllegalStateException("the lookup names " + named + " workers, expected " + workers);
            }
            HttpClient client = new BenchHttp(app.baseUrl()).client();
            ClosedLoop loop = http.loop();
            for (int r = 0; r < runs.repetitions; r++) {
                long cpu0 = THREADS.getCurrentThreadCpuTime();
                Latencies lookup = lookups(index, local);
                double cpuUs = (THREADS.getCurrentThreadCpuTime() - cpu0) / 1e3 / lookups;
                List<ClosedLoop.Load> loads = loop.interleaved(
                        List.of(
                                new ClosedLoop.Target(
                                        client,
                                        URI.create(app.baseUrl() + "/query_by_hash"),
                                        List.of(body),
                                        "application/json"),
                                new ClosedLoop.Target(
                                        client,
                                        URI.create("http://127.0.0.1:" + noop.port() + "/query_by_hash"),
                                        List.of(body),
                                        "application/json")),
                        http.slices);
                ClosedLoop.Load byHash = loads.get(0);
                ClosedLoop.Load floor = loads.get(1);
                Rep rep = new Rep(lookup.percentileMicros(50), lookup.percentileMicros(99), cpuUs, byHash, floor);
                System.out.printf(
                        "rep %d: lookup p50/p99 %.1f/%.1f us (CPU %.1f us per lookup) | /query_by_hash %s | no-op %s (x%.2f)%n",
                        r + 1,
                        rep.lookupP50Us(),
                        rep.lookupP99Us(),
                        rep.lookupCpuUs(),
                        byHash.describe(),
                        floor.describe(),
                        byHash.p50Ms() / floor.p50Ms());
                if (byHash.errors() > 0) {
                    throw new IllegalStateException(byHash.errors() + " failed /query_by_hash requests");
                }
                reps.add(rep);
            }
        } finally {
            noop.stop();
        }
        return reps;
    }

    @Override
    void summarize(List<Rep> reps, Map<String, Object> out) {
        out.put("tokens", tokens);
        out.put("block_size", blockSize);
        out.put("workers", workers);
        out.put("clients", http.clients);
        out.put("lookup_p50_us", Medians.of(reps, Rep::lookupP50Us));
        out.put("lookup_p99_us", Medians.of(reps, Rep::lookupP99Us));
        out.put("lookup_cpu_us", Medians.of(reps, Rep::lookupCpuUs));
        out.put("query_by_hash_p50_ms", Medians.of(reps, r -> r.byHash().p50Ms()));
        out.put("noop_p50_ms", Medians.of(reps, r -> r.noop().p50Ms()));
        out.put("query_by_hash_over_noop_p50", Medians.ofRatio(reps, Rep::byHash, Rep::noop, Load::p50Ms));
        // the process's CPU per request (client and server), which other work on a shared machine disturbs less
        out.put("query_by_hash_over_noop_cpu", Medians.ofRatio(reps, Rep::byHash, Rep::noop, Load::cpuMsPerRequest));
        out.putAll(Machine.toJson());
    }

    /** Worker w holds the first {@code (w + 1) / workers} of the prompt. */
    private int depth(int w, int blocks) {
        return (int) ((long) blocks * (w + 1) / workers);
    }

    private Latencies lookups(ModelIndex index, long[] local) {
        long[] samples = new long[lookups];
        long sink = 0;
        for (int i = 0; i < lookups; i++) {
            long t0 = System.nanoTime();
            sink += index.findMatches(local).workers().size();
            samples[i] = System.nanoTime() - t0;
        }
        if (sink < 0) {
            throw new AssertionError("unreachable; keeps the lookups from being optimised away");
        }
        return new Latencies(samples, lookups);
    }

    private static byte[] body(long[] local) {
        StringBuilder sb = new StringBuilder(local.length * 21 + 64);
        sb.append("{\"model_name\":\"").append(MODEL).append("\",\"block_hashes\":[");
        for (int i = 0; i < local.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(local[i]);
        }
        return sb.append("]}").toString().getBytes(StandardCharsets.UTF_8);
    }
}
