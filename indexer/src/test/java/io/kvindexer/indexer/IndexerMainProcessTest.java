package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.http.OtlpCollector;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The real {@code main} in a child JVM, as a user starts it: exit codes, one-line errors, help, a live server. Each
 * method starts its own child (the run is mostly JVM starts and the 4 s of a shutdown delay), so they run two at once.
 */
class IndexerMainProcessTest {

    private record Run(int exit, String stdout, String stderr) {}

    private static ProcessBuilder java(Map<String, String> env, String... args) {
        ProcessBuilder pb = IndexerProcess.command(IndexerProcess.QUICK_START, args);
        pb.environment().putAll(env);
        return pb;
    }

    private static Run run(Map<String, String> env, String... args) throws Exception {
        Process p = java(env, args).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("process exits").isTrue();
        return new Run(
                p.exitValue(),
                new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8),
                new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
    }

    /** A live indexer on a free loopback port serving model llama (block size 16), with {@code env} and {@code more}. */
    static IndexerProcess startLlama(Map<String, String> env, String... more) throws Exception {
        List<String> args = new ArrayList<>(
                List.of("--port", "0", "--host", "127.0.0.1", "--block-size", "16", "--model-name", "llama"));
        args.addAll(List.of(more));
        return IndexerProcess.start(env, IndexerProcess.QUICK_START, args.toArray(String[]::new));
    }

    /** {@link #startLlama} with one instance of two ranks at ports nobody serves. */
    private static IndexerProcess startWithTwoRanks() throws Exception {
        return startLlama(Map.of(), "--workers", "1=tcp://127.0.0.1:1,1:1=tcp://127.0.0.1:2");
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void badFlagIsOneLineAndNonZeroExit() throws Exception {
        Run r = run(Map.of(), "--port", "notaport");
        assertThat(r.exit()).isNotZero();
        assertThat(r.stderr().strip().lines()).hasSize(1);
        assertThat(r.stderr()).contains("--port");

        r = run(Map.of(), "--workers", "1=tcp://h:1");
        assertThat(r.exit()).isNotZero();
        assertThat(r.stderr().strip()).isEqualTo("kv-indexer: --block-size is required when --workers is specified");

        r = run(Map.of(), "--bogus");
        assertThat(r.exit()).isNotZero();
        assertThat(r.stderr().strip().lines()).hasSize(1);
        assertThat(r.stderr()).contains("--bogus");
    }

    /** A --host the server cannot listen on is a bad value (2), not a failed start (1) blaming another indexer. */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aHostThatDoesNotResolveIsOneLineAndExitTwo() throws Exception {
        Run r = run(Map.of(), "--host", "999.1.1.1", "--port", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip())
                .isEqualTo("kv-indexer: invalid value for --host: `999.1.1.1` does not resolve to an address");
        r = run(Map.of(), "--host", "", "--port", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip())
                .isEqualTo("kv-indexer: invalid value for --host: empty (give a value, or leave the flag out for its"
                        + " default)");
        assertThat(r.stdout()).doesNotContain("listening");
    }

    /** An empty value is a usage error like any bad value: one line naming the flag, exit 2, nothing started. */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void anEmptyValueIsOneLineAndExitTwo() throws Exception {
        Run r = run(Map.of(), "--port", "0", "--block-ttl", "");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip())
                .isEqualTo("kv-indexer: invalid value for --block-ttl: empty (give a value, or leave the flag out for"
                        + " its default)");
        assertThat(r.stdout()).doesNotContain("listening");
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void badEnvironmentIsOneLine() throws Exception {
        Run r = run(Map.of("DYN_ROUTER_MIN_INITIAL_WORKERS", "two"), "--port", "0");
        assertThat(r.exit()).isNotZero();
        assertThat(r.stderr().strip())
                .isEqualTo("kv-indexer: DYN_ROUTER_MIN_INITIAL_WORKERS must be a non-negative"
                        + " integer, got \"two\": invalid digit found in string");
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aBadLogVariableIsOneLine() throws Exception {
        Run r = run(Map.of("DYN_LOG", "info,io.kvindexer=loud"), "--port", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip())
                .isEqualTo("kv-indexer: DYN_LOG: unknown level \"loud\" in \"info,io.kvindexer=loud\""
                        + " (error, warn, info, debug, trace or off)");
    }

    /**
     * DYN_LOGGING_JSONL, as a deployment written for Dynamo's indexer sets it: every log line of a start and a
     * shutdown is one JSON object with Dynamo's fields, the lines printed for a person (the address, the demo's
     * commands) one record; DYN_LOG=warn leaves out the INFO lines.
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void logsJsonLinesWhenAskedTo() throws Exception {
        List<String> logged;
        List<String> jvm = new ArrayList<>(IndexerProcess.QUICK_START);
        if (Runtime.version().feature() >= 23) {
            jvm.add("--sun-misc-unsafe-memory-access=allow"); // as the images run it: else the JVM warns in plain text
        }
        try (IndexerProcess p = IndexerProcess.start(
                Map.of("DYN_LOGGING_JSONL", "true"),
                jvm,
                "--port",
                "0",
                "--host",
                "127.0.0.1",
                "--block-size",
                "16",
                "--workers",
                "9=tcp://127.0.0.1:1",
                "--demo")) {
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(p.output()).contains("kv-indexer listening on"));
            assertThat(p.terminate()).as("exits on SIGTERM").isTrue();
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(p.output()).contains("stopped 4 listeners in"));
            logged = p.output().lines().toList(); // standard output and error: nothing but JSON records
        }
        assertThat(logged).isNotEmpty();
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> records = new ArrayList<>();
        for (String line : logged) {
            assertThat(line).as("a log line").startsWith("{");
            records.add(json.readTree(line));
        }
        for (JsonNode r : records) {
            assertThat(r.get("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{6}Z");
            assertThat(r.get("level").asText()).isIn("ERROR", "WARN", "INFO", "DEBUG", "TRACE");
            assertThat(r.get("target").asText()).isNotEmpty();
        }
        assertThat(records)
                .anySatisfy(r -> assertThat(r.get("message").asText()).startsWith("stopped 4 listeners in"))
                .anySatisfy(r -> assertThat(r.get("message").asText())
                        .matches(
                                "(?s)kv-indexer listening on (http://127\\.0\\.0\\.1:\\d+) \\(web console: \\1/ui/\\)\n"
                                        + "kv-indexer demo: 3 simulated engines .*\n  curl -s \\1/workers\n.*"));
    }

    /**
     * Dynamo's tracing variables on a real process: with OTEL_EXPORT_ENABLED its request spans and log records reach
     * an OTLP collector over gRPC, the spans as children of the caller's traceparent, and with DYN_LOGGING_JSONL the
     * log line the request writes carries the same trace id and the span's id.
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void spansGoToTheCollectorAndTheirIdsIntoTheLogLines() throws Exception {
        String trace = "0af7651916cd43dd8448eb211c80319c";
        List<String> logged;
        try (OtlpCollector collector = new OtlpCollector()) {
            Map<String, String> env = Map.of(
                    "DYN_LOGGING_JSONL", "true",
                    "OTEL_EXPORT_ENABLED", "true",
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", collector.grpcEndpoint(),
                    "OTEL_SERVICE_NAME", "kv-indexer-test",
                    // the SDK's batch delay (5 s by default): the span reaches the collector without the wait
                    "OTEL_BSP_SCHEDULE_DELAY", "100");
            try (IndexerProcess p = startLlama(env);
                    HttpTestClient http = new HttpTestClient(p.url())) {
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> http.get("/ready").status() == 200);
                http.request(
                                "POST",
                                "/register",
                                "application/json",
                                "{\"instance_id\":5,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"llama\",\"block_size\":16}"
                                        .getBytes(StandardCharsets.UTF_8),
                                "traceparent",
                                "00-" + trace + "-b7ad6b7169203331-01")
                        .assertStatus(201);
                await().atMost(Duration.ofSeconds(30))
                        .untilAsserted(() -> assertThat(collector.spans())
                                .anySatisfy(s -> assertThat(s.name()).isEqualTo("POST /register")));
                assertThat(p.terminate()).isTrue();
                logged = p.output().lines().toList();
            }
            OtlpCollector.Received span = collector.spans().stream()
                    .filter(s -> s.name().equals("POST /register"))
                    .findFirst()
                    .orElseThrow();
            assertThat(span.traceId()).isEqualTo(trace);
            assertThat(span.parentSpanId()).isEqualTo("b7ad6b7169203331");
            assertThat(span.resource()).containsEntry("service.name", "kv-indexer-test");
            ObjectMapper json = new ObjectMapper();
            JsonNode registered = null;
            for (String line : logged) {
                assertThat(line).as("a log line").startsWith("{");
                JsonNode r = json.readTree(line);
                if (r.get("message").asText().startsWith("registered instance 5 ")) {
                    registered = r;
                }
            }
            assertThat(registered).as("the register's log line").isNotNull();
            assertThat(registered.get("trace_id").asText()).isEqualTo(trace);
            assertThat(registered.get("span_id").asText()).isEqualTo(span.spanId());
            // and the same record reached the collector as a log record of that span (Dynamo exports logs too)
            assertThat(collector.logs()).anySatisfy(l -> {
                assertThat(l.body()).startsWith("registered instance 5 ");
                assertThat(l.traceId()).isEqualTo(trace);
                assertThat(l.spanId()).isEqualTo(span.spanId());
            });
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aBadTracingVariableIsOneLine() throws Exception {
        Run r = run(Map.of("OTEL_EXPORT_ENABLED", "maybe"), "--port", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip())
                .isEqualTo(
                        "kv-indexer: OTEL_EXPORT_ENABLED must be true or false (1/0, yes/no, on/off), got \"maybe\"");
        // the SDK's own variables are read by the SDK: what it refuses stops the start the same way
        r = run(Map.of("OTEL_EXPORT_ENABLED", "true", "OTEL_TRACES_SAMPLER", "bogus"), "--port", "0");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip().lines().toList().getLast())
                .isEqualTo("kv-indexer: invalid OpenTelemetry setting (OTEL_*): Unrecognized value for"
                        + " otel.traces.sampler: bogus");
    }

    /** DYN_LOG=warn leaves out the INFO lines; without it they are there ({@link #startsServesAndLogsItsShutdown}). */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void dynLogSetsTheLevels() throws Exception {
        try (IndexerProcess p = IndexerProcess.start(
                Map.of("DYN_LOG", "warn"), IndexerProcess.QUICK_START, "--port", "0", "--host", "127.0.0.1")) {
            assertThat(p.terminate()).isTrue();
            await().atMost(Duration.ofSeconds(10))
                    .untilAsserted(() -> assertThat(p.output()).contains("kv-indexer listening on"));
            assertThat(p.output()).doesNotContain(" INFO ");
        }
    }

    /**
     * {@code --shutdown-delay}, as Kubernetes stops a pod (SIGTERM while the Service may still send for a moment):
     * {@code /ready} turns 503 {@code shutting_down} at once, queries are still answered, every answer closes its
     * connection (a keep-alive client reconnects elsewhere), and the process ends once the delay is over.
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aShutdownDelayKeepsAnsweringWhileNotReady() throws Exception {
        try (IndexerProcess p = startLlama(Map.of(), "--shutdown-delay", "4s", "--workers", "1=tcp://127.0.0.1:1");
                HttpTestClient http = new HttpTestClient(p.url())) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> http.get("/ready").status() == 200);
            assertThat(rawGet(p.url(), "/health")).doesNotContainIgnoringCase("connection: close");
            long signalled = System.nanoTime();
            ProcessHandle.of(p.pid()).orElseThrow().destroy(); // SIGTERM, without waiting
            await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> {
                HttpTestClient.Response ready = http.get("/ready");
                assertThat(ready.status()).isEqualTo(503);
                assertThat(ready.json().get("reason").asText()).isEqualTo("shutting_down");
            });
            http.post("/query", "{\"model_name\":\"llama\",\"token_ids\":[1,2,3]}")
                    .assertStatus(200);
            http.get("/health").assertStatus(200);
            assertThat(rawGet(p.url(), "/health")).containsIgnoringCase("connection: close");
            assertThat(p.terminate()).as("ends after the delay").isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - signalled)).isGreaterThan(Duration.ofMillis(3500));
            assertThat(p.output()).contains("(--shutdown-delay): /ready answers 503");
        }
    }

    /**
     * The status line and headers of one HTTP/1.1 GET on a fresh socket (2 s for them to come): whether the answer
     * closes its connection is said there, so the test need not watch a kept connection for seconds.
     */
    private static String rawGet(String baseUrl, String path) throws Exception {
        URI uri = URI.create(baseUrl);
        try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
            socket.setSoTimeout(2000);
            socket.getOutputStream()
                    .write(("GET " + path + " HTTP/1.1\r\nHost: " + uri.getHost() + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
            StringBuilder head = new StringBuilder();
            InputStream in = socket.getInputStream();
            for (int b; head.indexOf("\r\n\r\n") < 0 && (b = in.read()) >= 0; ) {
                head.append((char) b);
            }
            assertThat(head.toString()).as("a whole head").endsWith("\r\n\r\n");
            return head.toString();
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void helpPrintsFlagsAndExitsZero() throws Exception {
        Run r = run(Map.of(), "--help");
        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).contains("--port", "--workers", "--block-size", "--peers", "--demo");
    }

    /**
     * A live server (one process for these checks: each start costs seconds): it serves; and what the shutdown logs
     * reaches the output, at the default level INFO (DYN_LOG unset): JUL's own shutdown hook closed the console handler
     * beside ours, and the lines of a SIGTERM's shutdown (the listeners stopped, a last snapshot that failed) were lost.
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void startsServesAndLogsItsShutdown() throws Exception {
        // IndexerProcess.start fails the test when no "listening on" line comes
        try (IndexerProcess p = startWithTwoRanks();
                HttpTestClient http = new HttpTestClient(p.url())) {
            assertThat(p.url()).as("listening line").isNotNull();
            http.get("/health").assertStatus(200);
            var workers = http.get("/workers").json();
            assertThat(workers).hasSize(1);
            assertThat(workers.get(0).get("model_name").asText()).isEqualTo("llama");
            assertThat(workers.get(0).get("endpoints").size()).isEqualTo(2);

            assertThat(p.terminate()).as("exits on SIGTERM").isTrue();
            await().atMost(Duration.ofSeconds(10)) // the reader of its output may lag the exit a little
                    .untilAsserted(() -> assertThat(p.output())
                            .contains("Helidon WebServer stopped all channels", "stopped 2 listeners in")
                            .containsPattern("Z INFO io\\.kvindexer\\."));
        }
    }
}
