package io.kvindexer.indexer.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.helidon.webserver.WebServer;
import io.kvindexer.indexer.IndexerApp;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * End-to-end {@code /query}: a closed-loop load generator ({@code --clients} virtual threads sharing one JDK
 * HttpClient) sends trace prompts of about 12 k tokens to a real indexer while engine simulators keep publishing
 * the trace's events to it over ZeroMQ. The same client then sends the same bodies to a no-op endpoint (a second
 * Helidon server in this process that reads and parses the body and answers an empty result): the HTTP-and-JSON
 * floor; and the same prompts as msgpack bodies ({@code token_ids} a little-endian u32 bin) to the indexer's
 * {@code /query}. Reports queries/s and p50/p99/p999 latency for each.
 */
@Command(
        name = "http-query-bench",
        description = "Load-tests POST /query under ZeroMQ ingest, next to a no-op endpoint with the same bodies.")
public final class HttpQueryBench extends RepeatedBench<HttpQueryBench.Rep> {

    private static final String JSON = "application/json";
    private static final String MSGPACK = "application/msgpack";
    private static final byte[] EMPTY_RESULT =
            "{\"scores\":{},\"frequencies\":[],\"instances\":{}}".getBytes(StandardCharsets.UTF_8);

    @Option(
            names = "--clients",
            description = "concurrent closed-loop clients (virtual threads) (default: ${DEFAULT-VALUE})")
    int clients = 16;

    @Option(names = "--seconds", description = "measured seconds per target (default: ${DEFAULT-VALUE})")
    double seconds = 5;

    @Option(
            names = "--warmup-seconds",
            description = "unmeasured seconds before each target (default: ${DEFAULT-VALUE})")
    double warmupSeconds = 2;

    @Option(names = "--min-tokens", description = "shortest prompt used as a query body (default: ${DEFAULT-VALUE})")
    int minTokens = 10_000;

    @Option(names = "--max-tokens", description = "longest prompt used as a query body (default: ${DEFAULT-VALUE})")
    int maxTokens = 14_000;

    @Option(names = "--repetitions", description = "runs; the median is reported (default: ${DEFAULT-VALUE})")
    int repetitions = 3;

    /** One target's closed-loop run. */
    public record Load(
            long requests,
            long errors,
            double seconds,
            double queriesPerSecond,
            double p50Ms,
            double p99Ms,
            double p999Ms) {}

    /**
     * One repetition, under the same ingest: the indexer's /query with JSON bodies, with msgpack bodies (token ids
     * as a little-endian u32 bin, the answer in msgpack), and the no-op floor of the JSON bodies.
     */
    public record Rep(Load query, Load binary, Load noop, long ingestBatchesDuringRun) {}

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
                clients);
        List<Rep> reps = new ArrayList<>();
        for (int r = 0; r < repetitions; r++) {
            Rep rep = runOnce(w, bodies, binaryBodies);
            System.out.printf(
                    "rep %d: /query %.0f q/s p50/p99/p999 %.3f/%.3f/%.3f ms | msgpack %.0f q/s"
                            + " p50/p99/p999 %.3f/%.3f/%.3f ms | no-op %.0f q/s p50/p99/p999 %.3f/%.3f/%.3f ms"
                            + " | %d ingest batches meanwhile%n",
                    r + 1,
                    rep.query().queriesPerSecond(),
                    rep.query().p50Ms(),
                    rep.query().p99Ms(),
                    rep.query().p999Ms(),
                    rep.binary().queriesPerSecond(),
                    rep.binary().p50Ms(),
                    rep.binary().p99Ms(),
                    rep.binary().p999Ms(),
                    rep.noop().queriesPerSecond(),
                    rep.noop().p50Ms(),
                    rep.noop().p99Ms(),
                    rep.noop().p999Ms(),
                    rep.ingestBatchesDuringRun());
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
        WebServer noop = noopServer();
        try (IndexerApp app = startIndexer();
                SimFleet fleet = new SimFleet(w, new BenchHttp(app.baseUrl()))) {
            fleet.startAndRegister();
            // ingest paced to last both measured phases and their warm-ups
            double ingestSeconds = 3 * (seconds + warmupSeconds);
            AtomicBoolean stop = new AtomicBoolean();
            long[] published = {0};
            Thread feeder = Thread.ofPlatform()
                    .name("ingest-feeder")
                    .start(() -> published[0] = pacedFeed(fleet, ingestSeconds, stop));
            HttpClient client = HttpClient.newBuilder()
                    .version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10))
                    .build();
            Load query = load(client, URI.create(app.baseUrl() + "/query"), bodies, JSON);
            Load binary = load(client, URI.create(app.baseUrl() + "/query"), binaryBodies, MSGPACK);
            Load floor = load(client, URI.create("http://127.0.0.1:" + noop.port() + "/query"), bodies, JSON);
            stop.set(true);
            feeder.join();
            return new Rep(query, binary, floor, published[0]);
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

    private Load load(HttpClient client, URI uri, List<byte[]> bodies, String contentType) throws InterruptedException {
        run(client, uri, bodies, contentType, (long) (warmupSeconds * 1e9), null);
        long[][] perClient = new long[clients][];
        int[] counts = new int[clients];
        long[] errors = new long[clients];
        long measured = (long) (seconds * 1e9);
        long start = System.nanoTime();
        run(client, uri, bodies, contentType, measured, (c, lat, ok) -> {
            if (!ok) {
                errors[c]++;
                return;
            }
            if (perClient[c] == null) {
                perClient[c] = new long[1 << 14];
            } else if (counts[c] == perClient[c].length) {
                perClient[c] = Arrays.copyOf(perClient[c], counts[c] * 2);
            }
            perClient[c][counts[c]++] = lat;
        });
        double elapsed = (System.nanoTime() - start) / 1e9;
        int total = Arrays.stream(counts).sum();
        long[] all = new long[total];
        int p = 0;
        for (int c = 0; c < clients; c++) {
            if (counts[c] > 0) {
                System.arraycopy(perClient[c], 0, all, p, counts[c]);
                p += counts[c];
            }
        }
        Latencies lat = new Latencies(all, total);
        return new Load(
                total,
                Arrays.stream(errors).sum(),
                elapsed,
                total / elapsed,
                lat.percentileMicros(50) / 1e3,
                lat.percentileMicros(99) / 1e3,
                lat.percentileMicros(99.9) / 1e3);
    }

    private interface Sink {
        void record(int client, long latencyNanos, boolean ok);
    }

    /** {@code clients} virtual threads, each sending one request after the other until {@code nanos} have passed. */
    private void run(HttpClient client, URI uri, List<byte[]> bodies, String contentType, long nanos, Sink sink)
            throws InterruptedException {
        long end = System.nanoTime() + nanos;
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int id = c;
            threads.add(Thread.ofVirtual().start(() -> {
                int i = id;
                while (System.nanoTime() < end) {
                    HttpRequest req = HttpRequest.newBuilder(uri)
                            .header("Content-Type", contentType)
                            .POST(HttpRequest.BodyPublishers.ofByteArray(bodies.get(i++ % bodies.size())))
                            .build();
                    long t0 = System.nanoTime();
                    boolean ok;
                    try {
                        HttpResponse<byte[]> r = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
                        ok = r.statusCode() == 200;
                    } catch (IOException e) {
                        ok = false;
                    } catch (InterruptedException e) {
                        return;
                    }
                    long lat = System.nanoTime() - t0;
                    if (sink != null) {
                        sink.record(id, lat, ok);
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    /** A Helidon server whose POST /query reads and parses the body like a real one, then answers an empty result. */
    static WebServer noopServer() {
        JsonFactory factory = new JsonFactory();
        return WebServer.builder()
                .host("127.0.0.1")
                .port(0)
                .routing(r -> r.post("/query", (req, res) -> {
                    byte[] body = req.content().as(byte[].class);
                    int tokens = parseTokens(factory, body);
                    if (tokens < 0) {
                        res.status(400).send("{\"error\":\"token_ids\"}");
                        return;
                    }
                    res.header("Content-Type", "application/json").send(EMPTY_RESULT);
                }))
                .build()
                .start();
    }

    /** Streams the body into an int[] of token ids and a model name; returns the token count, -1 when malformed. */
    static int parseTokens(JsonFactory factory, byte[] body) {
        try (JsonParser p = factory.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return -1;
            }
            IntArrayList tokens = new IntArrayList(16_384);
            String model = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                if ("token_ids".equals(field) && t == JsonToken.START_ARRAY) {
                    while (p.nextToken() == JsonToken.VALUE_NUMBER_INT) {
                        tokens.add((int) p.getLongValue());
                    }
                } else if ("model_name".equals(field)) {
                    model = p.getText();
                } else {
                    p.skipChildren();
                }
            }
            return model == null ? -1 : tokens.toIntArray().length;
        } catch (IOException e) {
            return -1;
        }
    }

    @Override
    Map<String, Object> summary(List<Rep> reps) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("query_per_s", Medians.of(reps, r -> r.query().queriesPerSecond()));
        out.put("query_p50_ms", Medians.of(reps, r -> r.query().p50Ms()));
        out.put("query_p99_ms", Medians.of(reps, r -> r.query().p99Ms()));
        out.put("query_p999_ms", Medians.of(reps, r -> r.query().p999Ms()));
        out.put("binary_query_per_s", Medians.of(reps, r -> r.binary().queriesPerSecond()));
        out.put("binary_query_p50_ms", Medians.of(reps, r -> r.binary().p50Ms()));
        out.put("binary_query_p99_ms", Medians.of(reps, r -> r.binary().p99Ms()));
        out.put(
                "binary_over_query",
                Medians.of(reps, r -> r.binary().queriesPerSecond() / r.query().queriesPerSecond()));
        out.put("noop_per_s", Medians.of(reps, r -> r.noop().queriesPerSecond()));
        out.put("noop_p50_ms", Medians.of(reps, r -> r.noop().p50Ms()));
        out.put("noop_p99_ms", Medians.of(reps, r -> r.noop().p99Ms()));
        out.put("noop_p999_ms", Medians.of(reps, r -> r.noop().p999Ms()));
        out.put(
                "query_over_noop",
                Medians.of(reps, r -> r.query().queriesPerSecond() / r.noop().queriesPerSecond()));
        out.put("clients", clients);
        out.put("threads", threads);
        out.put("workers", workload.workers);
        out.put("reps", reps);
        return out;
    }
}
