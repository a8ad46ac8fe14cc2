package io.kvindexer.bench;

import io.helidon.webserver.WebServer;
import io.kvindexer.bench.ClosedLoop.Load;
import io.kvindexer.indexer.IndexerApp;
import java.net.URI;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * End-to-end {@code /query}: a closed-loop load generator ({@link ClosedLoop}: {@code --clients} virtual threads
 * sharing one JDK HttpClient) sends trace prompts of about 12 k tokens to a real indexer while engine simulators keep
 * publishing the trace's events to it over ZeroMQ. The same client sends the same bodies to a no-op endpoint
 * ({@link NoopQueryServer}, a second Helidon server in this process that reads and parses the body and answers an
 * empty result): the HTTP-and-JSON floor; the same prompts as msgpack bodies ({@code token_ids} a little-endian u32
 * bin) to the indexer's {@code /query}; and those to the no-op, the HTTP-and-msgpack floor. The four targets take
 * turns in slices ({@code --slices}), so each ratio compares the same stretches of a shared machine. Reports
 * queries/s, p50/p99/p999 latency and the process's CPU per request for each.
 */
@Command(
        name = "http-query-bench",
        description = "Load-tests POST /query under ZeroMQ ingest, next to a no-op endpoint with the same bodies.")
public final class HttpQueryBench extends IndexerBench<HttpQueryBench.Rep> {

    private static final String JSON = "application/json";
    private static final String MSGPACK = "application/msgpack";

    @Mixin
    final ClosedLoopOptions http = new ClosedLoopOptions(16, 5, 2, 5);

    @Option(names = "--min-tokens", description = "shortest prompt used as a query body")
    int minTokens = 10_000;

    @Option(names = "--max-tokens", description = "longest prompt used as a query body")
    int maxTokens = 14_000;

    @Option(
            names = "--warmup-reps",
            description = "unmeasured repetitions first (the JIT compiles the query path during them: the measured"
                    + " repetitions rose from 0.5 to 0.8 x the no-op one after another without one)")
    int warmupReps = 1;

    /**
     * One repetition, under the same ingest: the indexer's /query with JSON bodies, with msgpack bodies (token ids
     * as a little-endian u32 bin, the answer in msgpack), and the no-op floors of the JSON and the msgpack bodies.
     */
    public record Rep(
            ClosedLoop.Load query,
            ClosedLoop.Load binary,
            ClosedLoop.Load noop,
            ClosedLoop.Load binaryNoop,
            long ingestBatchesDuringRun) {

        /** The four loads side by side, as each progress line shows them. */
        String describe() {
            return "/query " + query.describe() + " | msgpack " + binary.describe() + " | no-op " + noop.describe()
                    + " | msgpack no-op " + binaryNoop.describe();
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new HttpQueryBench()).execute(args));
    }

    @Override
    public List<Rep> runBench() throws Exception {
        Workload w = workload.build();
        List<byte[]> bodies = bodies(w, false);
        List<byte[]> binaryBodies = bodies(w, true);
        if (bodies.isEmpty()) {
            throw new IllegalArgumentException("no prompt between --min-tokens and --max-tokens in the trace slice");
        }
        System.out.printf(
                "%d query bodies of %d..%d tokens (mean %.0f bytes JSON, %.0f bytes msgpack), %d clients%n",
                bodies.size(),
                minTokens,
                maxTokens,
                bodies.stream().mapToInt(b -> b.length).average().orElse(0),
                binaryBodies.stream().mapToInt(b -> b.length).average().orElse(0),
                http.clients);
        for (int r = 0; r < warmupReps; r++) {
            Rep rep = runOnce(w, bodies, binaryBodies);
            System.out.printf("warm-up %d (not counted): %s%n", r + 1, rep.describe());
        }
        List<Rep> reps = new ArrayList<>();
        for (int r = 0; r < runs.repetitions; r++) {
            Rep rep = runOnce(w, bodies, binaryBodies);
            System.out.printf(
                    "rep %d: %s | %d ingest batches meanwhile%n", r + 1, rep.describe(), rep.ingestBatchesDuringRun());
            reps.add(rep);
        }
        return reps;
    }

    private List<byte[]> bodies(Workload w, boolean msgpack) {
        int bs = w.spec().blockSize();
        List<byte[]> out = new ArrayList<>();
        for (Workload.Op op : w.ops()) {
            int tokens = op.kind() == Workload.Kind.QUERY ? op.tokenValues().length * bs : 0;
            if (tokens >= minTokens && tokens <= maxTokens && out.size() < 512) {
                out.add(
                        msgpack
                                ? BenchHttp.msgpackQueryBody(SimFleet.MODEL, op.tokens())
                                : BenchHttp.queryBody(SimFleet.MODEL, op.tokens()));
            }
        }
        return out;
    }

    private Rep runOnce(Workload w, List<byte[]> bodies, List<byte[]> binaryBodies) throws Exception {
        WebServer noop = NoopQueryServer.start();
        try (IndexerApp app = startIndexer();
                SimFleet fleet = new SimFleet(w, new BenchHttp(app.baseUrl()))) {
            fleet.startAndRegister();
            // ingest paced to last the four targets' measured time and warm-ups
            double ingestSeconds = 4 * (http.seconds + http.warmupSeconds);
            AtomicBoolean stop = new AtomicBoolean();
            long[] published = {0};
            Thread feeder = Thread.ofPlatform()
                    .name("ingest-feeder")
                    .start(() -> published[0] = pacedFeed(fleet, ingestSeconds, stop));
            HttpClient client = new BenchHttp(app.baseUrl()).client();
            ClosedLoop loop = http.loop();
            URI query = URI.create(app.baseUrl() + "/query");
            URI noopQuery = URI.create("http://127.0.0.1:" + noop.port() + "/query");
            List<ClosedLoop.Load> loads = loop.interleaved(
                    List.of(
                            new ClosedLoop.Target(client, query, bodies, JSON),
                            new ClosedLoop.Target(client, query, binaryBodies, MSGPACK),
                            new ClosedLoop.Target(client, noopQuery, bodies, JSON),
                            new ClosedLoop.Target(client, noopQuery, binaryBodies, MSGPACK)),
                    http.slices);
            stop.set(true);
            feeder.join();
            return new Rep(loads.get(0), loads.get(1), loads.get(2), loads.get(3), published[0]);
        } finally {
            noop.stop();
        }
    }

    /** Publishes the fleet's batches spread evenly over {@code seconds}; returns how many were sent. */
    private static long pacedFeed(SimFleet fleet, double seconds, AtomicBoolean stop) {
        int total = fleet.batchCount();
        long intervalNanos = (long) (seconds * 1e9 / Math.max(1, total));
        long start = System.nanoTime();
        long sent = 0;
        boolean any = true;
        for (int i = 0; any && !stop.get(); i++) {
            any = false;
            for (int worker = 0; worker < fleet.workers(); worker++) {
                if (fleet.publish(worker, i)) {
                    any = true;
                    sent++;
                    long due = start + sent * intervalNanos;
                    long ahead = due - System.nanoTime();
                    if (ahead > 0) {
                        LockSupport.parkNanos(ahead);
                    }
                }
            }
        }
        return sent;
    }

    @Override
    void summarize(List<Rep> reps, Map<String, Object> out) {
        putMedians(out, "query", reps.stream().map(Rep::query).toList(), true);
        putMedians(out, "binary_query", reps.stream().map(Rep::binary).toList(), false);
        out.put("binary_over_query", Medians.ofRatio(reps, Rep::binary, Rep::query, Load::queriesPerSecond));
        putMedians(out, "noop", reps.stream().map(Rep::noop).toList(), true);
        putMedians(out, "binary_noop", reps.stream().map(Rep::binaryNoop).toList(), false);
        out.put(
                "binary_query_over_binary_noop",
                Medians.ofRatio(reps, Rep::binary, Rep::binaryNoop, Load::queriesPerSecond));
        out.put("query_over_noop", Medians.ofRatio(reps, Rep::query, Rep::noop, Load::queriesPerSecond));
        // the same two ratios from the process's CPU per request (client, servers, ingest, GC), which other work on
        // a shared machine disturbs far less than the rates; less CPU is better, so the other target is over
        out.put("query_over_noop_cpu", Medians.ofRatio(reps, Rep::noop, Rep::query, Load::cpuMsPerRequest));
        out.put("binary_over_query_cpu", Medians.ofRatio(reps, Rep::query, Rep::binary, Load::cpuMsPerRequest));
        out.put("clients", http.clients);
        out.put("threads", threads);
        out.put("workers", workload.workers);
    }

    /**
     * One target's median rate and latencies as {@code PREFIX_per_s}, {@code PREFIX_p50_ms}, {@code PREFIX_p99_ms}
     * and, with {@code p999}, {@code PREFIX_p999_ms} (the msgpack target's JSON has never carried a p999).
     */
    private static void putMedians(Map<String, Object> out, String prefix, List<ClosedLoop.Load> loads, boolean p999) {
        out.put(prefix + "_per_s", Medians.of(loads, ClosedLoop.Load::queriesPerSecond));
        out.put(prefix + "_p50_ms", Medians.of(loads, ClosedLoop.Load::p50Ms));
        out.put(prefix + "_p99_ms", Medians.of(loads, ClosedLoop.Load::p99Ms));
        if (p999) {
            out.put(prefix + "_p999_ms", Medians.of(loads, ClosedLoop.Load::p999Ms));
        }
    }
}
