package io.kvindexer.bench;

import com.sun.net.httpserver.HttpServer;
import io.kvindexer.bench.ClosedLoop.Load;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.TracingSettings;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What request spans cost ({@code OTEL_EXPORT_ENABLED}, operations.md, Tracing): two indexers in this process, one
 * without spans and one exporting every request's span over OTLP/HTTP to a sink here that reads and drops the
 * batches, answer the same {@code /query} bodies from {@link ClosedLoop} clients, the two taking turns in slices. The
 * untraced indexer is the floor; the figures are the traced one's rate over it and what it adds per request in CPU
 * (the process's, export included) and in p50 latency. The index holds one worker and no block, so a query is the
 * request's own work (parse, hash, answer) and the span is as large a share of it as it gets.
 */
@Command(name = "tracing-bench", description = "/query with request spans exported over OTLP, beside the same without.")
public final class TracingBench extends RepeatedBench<TracingBench.Rep> {

    private static final String MODEL = "bench";

    @Mixin
    final ClosedLoopOptions http = new ClosedLoopOptions(4, 4, 2, 4);

    @Option(names = "--tokens", description = "tokens per query body")
    int tokens = 1_024;

    /** One repetition: the untraced indexer, the traced one, and the spans the sink received meanwhile. */
    public record Rep(Load off, Load on, long spansBytes, long batches) {}

    public static void main(String[] args) {
        System.exit(new CommandLine(new TracingBench()).execute(args));
    }

    @Override
    public List<Rep> runBench() throws Exception {
        Machine.printBanner("TracingBench");
        int[] prompt = new int[tokens];
        for (int i = 0; i < tokens; i++) {
            prompt[i] = 1 + i;
        }
        List<byte[]> bodies = List.of(BenchHttp.queryBody(MODEL, prompt));
        runOnce(bodies); // warm-up: both query paths and the exporter compiled
        List<Rep> reps = new ArrayList<>();
        for (int r = 0; r < runs.repetitions; r++) {
            Rep rep = runOnce(bodies);
            System.out.printf(
                    "rep %d: without spans %s | with spans exported %s | %d batches, %d bytes of spans%n",
                    r + 1, rep.off().describe(), rep.on().describe(), rep.batches(), rep.spansBytes());
            reps.add(rep);
        }
        return reps;
    }

    private Rep runOnce(List<byte[]> bodies) throws Exception {
        AtomicLong bytes = new AtomicLong();
        AtomicLong batches = new AtomicLong();
        HttpServer sink = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        sink.createContext("/v1/traces", exchange -> {
            try (exchange;
                    InputStream in = exchange.getRequestBody()) {
                bytes.addAndGet(in.readAllBytes().length);
                batches.incrementAndGet();
                exchange.sendResponseHeaders(200, -1);
            }
        });
        sink.createContext(
                "/v1/logs",
                exchange -> { // the log records go beside the spans: taken, not counted
                    try (exchange;
                            InputStream in = exchange.getRequestBody()) {
                        in.readAllBytes();
                        exchange.sendResponseHeaders(200, -1);
                    }
                });
        sink.start();
        Map<String, String> env = Map.of(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://127.0.0.1:" + sink.getAddress().getPort() + "/v1/traces",
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                "http/protobuf");
        try {
            List<Load> loads;
            try (IndexerApp off = IndexerApp.start(IndexerConfig.defaults());
                    IndexerApp on = IndexerApp.start(
                            IndexerConfig.defaults().with(c -> c.tracing = new TracingSettings(true, true, env)))) {
                for (IndexerApp app : List.of(off, on)) {
                    new BenchHttp(app.baseUrl()).register(1, "tcp://127.0.0.1:1", null, MODEL, 16);
                }
                loads = http.loop()
                        .interleaved(
                                List.of(
                                        ClosedLoop.Target.post(
                                                URI.create(off.baseUrl() + "/query"), bodies, "application/json"),
                                        ClosedLoop.Target.post(
                                                URI.create(on.baseUrl() + "/query"), bodies, "application/json")),
                                http.slices);
            }
            // read once the traced indexer is closed: closing exports what its span batches still held (a short or
            // slow run ends below a full batch, and the sink had seen nothing)
            return new Rep(loads.get(0), loads.get(1), bytes.get(), batches.get());
        } finally {
            sink.stop(0);
        }
    }

    @Override
    void summarize(List<Rep> reps, Map<String, Object> out) {
        out.put("on_over_off", Medians.ofRatio(reps, Rep::on, Rep::off, Load::queriesPerSecond));
        out.put(
                "cpu_us_added_per_request",
                Medians.of(reps, r -> (r.on().cpuMsPerRequest() - r.off().cpuMsPerRequest()) * 1e3));
        out.put("p50_us_added", Medians.of(reps, r -> (r.on().p50Ms() - r.off().p50Ms()) * 1e3));
        out.put("off_per_s", Medians.of(reps, r -> r.off().queriesPerSecond()));
        out.put("on_per_s", Medians.of(reps, r -> r.on().queriesPerSecond()));
        out.put(
                "span_bytes_per_request",
                Medians.of(reps, r -> (double) r.spansBytes() / Math.max(1, r.on().requests())));
        out.put("clients", http.clients);
        out.put("tokens", tokens);
    }
}
