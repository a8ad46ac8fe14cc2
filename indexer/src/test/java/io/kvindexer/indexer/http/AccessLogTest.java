package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.logging.LineFormatter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Dynamo's {@code --access-log}: one JSON record per request, as its middleware writes them, and {@code POST
 * /reopen_logs} after a rotation; on a real server, over a socket.
 */
class AccessLogTest {

    @TempDir
    Path dir;

    private IndexerApp start(Path file, boolean localTime, String token) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.accessLog = new AccessLogSettings(file, "x-request-trace", localTime);
            c.authToken = token;
        }));
    }

    /** The file's records, once it holds {@code count} of them (a writer thread appends them). */
    private static List<JsonNode> records(Path file, int count) {
        List<JsonNode> out = new ArrayList<>();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            out.clear();
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                out.add(HttpTestClient.JSON.readTree(line));
            }
            assertThat(out).hasSize(count);
        });
        return out;
    }

    @Test
    void everyRequestButMetricsScrapesIsOneRecordWithItsRouteModelTraceIdAndStatus() throws Exception {
        Path file = dir.resolve("access.log");
        Instant before = Instant.now().minusMillis(1);
        try (IndexerApp app = start(file, false, null);
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.get("/health").assertStatus(200);
            http.request(
                            "POST",
                            "/query",
                            "application/json",
                            "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4]}".getBytes(StandardCharsets.UTF_8),
                            "X-Request-Trace",
                            "trace-42")
                    .assertStatus(404);
            http.post(
                            "/register",
                            "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"m\","
                                    + "\"block_size\":4}")
                    .assertStatus(201);
            http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4]}")
                    .assertStatus(200);
            http.post("/query", "not json").assertStatus(400);
            http.get("/metrics").assertStatus(200);
            http.get("/no/such/route").assertStatus(404);

            List<JsonNode> r = records(file, 6);
            assertThat(r)
                    .extracting(
                            n -> n.get("method").asText() + " " + n.get("path").asText())
                    .containsExactly(
                            "GET /health",
                            "POST /query",
                            "POST /register",
                            "POST /query",
                            "POST /query",
                            "GET unknown");
            assertThat(r).extracting(n -> n.get("status").asInt()).containsExactly(200, 404, 201, 200, 400, 404);
            assertThat(r).extracting(n -> n.get("model").asText()).containsExactly("-", "m", "m", "m", "-", "-");
            assertThat(r)
                    .extracting(n -> n.get("trace_id").asText())
                    .containsExactly("-", "trace-42", "-", "-", "-", "-");
            for (JsonNode n : r) {
                assertThat(n.fieldNames())
                        .toIterable()
                        .containsExactly("ts", "trace_id", "method", "path", "model", "status", "duration_ms");
                assertThat(n.get("ts").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
                assertThat(Instant.parse(n.get("ts").asText())).isBetween(before, Instant.now());
                assertThat(n.get("duration_ms").isNumber()).isTrue();
                assertThat(n.get("duration_ms").asDouble()).isGreaterThanOrEqualTo(0);
            }
        }
    }

    /**
     * A client's text in a record or a log line is cut at 256 characters: the trace-id header, the method (the server
     * takes a request line of 4 KB and headers of 16 KB) and the {@code x-request-id} every log line of the request
     * carries.
     */
    @Test
    void clientHeadersAndMethodsAreCutAt256Characters() throws Exception {
        Path file = dir.resolve("access.log");
        List<String> lines = new CopyOnWriteArrayList<>();
        LineFormatter jsonl = new LineFormatter(true, ZoneOffset.UTC);
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                lines.add(jsonl.format(r)); // on the request's thread, as the console handler formats it
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger registry = Logger.getLogger("io.kvindexer.indexer.registry");
        registry.addHandler(capture);
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                    c.accessLog = new AccessLogSettings(file, "x-request-trace", false);
                    c.tracing = new TracingSettings(true, false, java.util.Map.of());
                }));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.request(
                            "POST",
                            "/register",
                            "application/json",
                            "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"m\",\"block_size\":4}"
                                    .getBytes(StandardCharsets.UTF_8),
                            "X-Request-Trace",
                            "t".repeat(5_000),
                            "x-request-id",
                            "r".repeat(5_000))
                    .assertStatus(201);
            http.request("X".repeat(3_000), "/query", "application/json", new byte[0])
                    .assertStatus(405);
            List<JsonNode> r = records(file, 2);
            assertThat(r.get(0).get("trace_id").asText()).isEqualTo("t".repeat(256));
            assertThat(r.get(1).get("method").asText()).isEqualTo("X".repeat(256));
        } finally {
            registry.removeHandler(capture);
        }
        JsonNode registered = lines.stream()
                .map(AccessLogTest::json)
                .filter(j -> j.get("message").asText().startsWith("registered instance 1 "))
                .findFirst()
                .orElseThrow();
        assertThat(registered.get("x_request_id").asText()).isEqualTo("r".repeat(256));
    }

    private static JsonNode json(String line) {
        try {
            return HttpTestClient.JSON.readTree(line);
        } catch (IOException e) {
            throw new AssertionError(line, e);
        }
    }

    /** With request spans, a record without the trace-id header takes its span's trace id (the caller's). */
    @Test
    void withSpansTheTraceIdFallsBackToTheSpans() throws Exception {
        Path file = dir.resolve("access.log");
        String trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        String traceparent = "00-" + trace + "-00f067aa0ba902b7-01";
        byte[] query = "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4]}".getBytes(StandardCharsets.UTF_8);
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                    c.accessLog = new AccessLogSettings(file, "x-request-trace", false);
                    c.tracing = new TracingSettings(true, false, java.util.Map.of());
                }));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.request("POST", "/query", "application/json", query, "traceparent", traceparent)
                    .assertStatus(404);
            http.request(
                            "POST",
                            "/query",
                            "application/json",
                            query,
                            "traceparent",
                            traceparent,
                            "X-Request-Trace",
                            "trace-42")
                    .assertStatus(404);
            http.request("POST", "/query", "application/json", query).assertStatus(404);
            http.get("/health").assertStatus(200);
            List<JsonNode> r = records(file, 4);
            assertThat(r.get(0).get("trace_id").asText()).isEqualTo(trace);
            assertThat(r.get(1).get("trace_id").asText()).as("the header wins").isEqualTo("trace-42");
            assertThat(r.get(2).get("trace_id").asText())
                    .as("a trace of its own")
                    .matches("[0-9a-f]{32}")
                    .isNotEqualTo(trace);
            assertThat(r.get(3).get("trace_id").asText())
                    .as("probes get no span")
                    .isEqualTo("-");
        }
    }

    @Test
    void localTimeStampsCarryTheZonesOffset() throws Exception {
        Path file = dir.resolve("local.log");
        try (IndexerApp app = start(file, true, null);
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.get("/health").assertStatus(200);
            String ts = records(file, 1).getFirst().get("ts").asText();
            assertThat(ts).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}[+-]\\d\\d:\\d\\d");
            OffsetDateTime t = OffsetDateTime.parse(ts);
            assertThat(t.getOffset())
                    .isEqualTo(ZoneId.systemDefault().getRules().getOffset(t.toInstant()));
        }
    }

    @Test
    void reopenLogsWritesOnUnderTheNameAfterARotationAndSaysWhyWhenItCannot() throws Exception {
        Path logs = Files.createDirectory(dir.resolve("logs"));
        Path file = logs.resolve("access.log");
        try (IndexerApp app = start(file, false, "t0ken");
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.get("/health").assertStatus(200);
            records(file, 1);
            Path rotated = logs.resolve("access.log.1");
            Files.move(file, rotated);
            http.get("/peers").assertStatus(200); // still into the moved file: nothing reopened it yet
            http.post("/reopen_logs", "").assertStatus(401); // a token is set: it is needed
            http.request("POST", "/reopen_logs", null, null, "Authorization", "Bearer t0ken")
                    .assertOk(200);
            http.get("/workers").assertStatus(200);
            assertThat(records(rotated, 3))
                    .extracting(
                            n -> n.get("path").asText() + " " + n.get("status").asInt())
                    .containsExactly("/health 200", "/peers 200", "/reopen_logs 401");
            assertThat(records(file, 2))
                    .extracting(
                            n -> n.get("path").asText() + " " + n.get("status").asInt())
                    .containsExactly("/reopen_logs 200", "/workers 200");

            // the directory is gone: the reopen fails, says why, and the open file is written on
            Path moved = dir.resolve("logs-moved");
            Files.move(logs, moved);
            HttpTestClient.Response failed =
                    http.request("POST", "/reopen_logs", null, null, "Authorization", "Bearer t0ken");
            failed.assertStatus(500);
            assertThat(failed.error()).contains("cannot open --access-log", "no such file or directory");
            http.get("/health").assertStatus(200);
            assertThat(records(moved.resolve("access.log"), 4))
                    .extracting(
                            n -> n.get("path").asText() + " " + n.get("status").asInt())
                    .endsWith("/reopen_logs 500", "/health 200");
        }
    }

    @Test
    void withoutAnAccessLogReopenIsANoOpAndAFileThatCannotBeOpenedStopsTheStart() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.post("/reopen_logs", "").assertOk(200);
        }
        Path missing = dir.resolve("no-such-dir").resolve("access.log");
        assertThatThrownBy(() -> start(missing, false, null))
                .hasMessage("cannot open --access-log " + missing + ": no such file or directory");
    }

    /** A file that cannot be written (Linux's /dev/full: every write fails) loses its records, counted, never a request. */
    @Test
    void recordsThatCannotBeWrittenAreCountedAsDropped() throws IOException {
        Path full = Path.of("/dev/full");
        AtomicInteger dropped = new AtomicInteger();
        try (AccessLog log =
                AccessLog.open(new AccessLogSettings(full, "x-trace-id", false), dropped::incrementAndGet)) {
            for (int i = 0; i < 10; i++) {
                log.record(Instant.now(), "-", "GET", "/health", "-", 200, 1_000);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> dropped.get() == 10);
        }
    }
}
