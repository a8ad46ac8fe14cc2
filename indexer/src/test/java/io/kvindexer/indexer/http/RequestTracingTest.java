package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.logging.LineFormatter;
import io.opentelemetry.proto.trace.v1.Span;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * Request spans as a router's trace sees them: sent to a real OTLP collector (gRPC by default, HTTP when the
 * variables say so), children of the caller's {@code traceparent}, named by route, with status, model and {@code
 * x-request-id}; none for probes and scrapes; and the ids on the JSON log lines written inside them.
 */
class RequestTracingTest {

    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String CALLER_SPAN = "00f067aa0ba902b7";
    private static final String TRACEPARENT = "00-" + TRACE + "-" + CALLER_SPAN + "-01";
    private static final String REGISTER =
            "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"m\",\"block_size\":4}";

    private static IndexerApp start(boolean export, Map<String, String> env) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> c.tracing = new TracingSettings(true, export, env)));
    }

    private static Map<String, String> exportingTo(String endpoint) {
        return Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint, "OTEL_BSP_SCHEDULE_DELAY", "50");
    }

    private static void traffic(HttpTestClient http) {
        http.request(
                        "POST",
                        "/register",
                        "application/json",
                        REGISTER.getBytes(StandardCharsets.UTF_8),
                        "traceparent",
                        TRACEPARENT,
                        "x-request-id",
                        "req-7")
                .assertStatus(201);
        http.post("/query", "{\"model_name\":\"nope\",\"token_ids\":[1,2,3,4]}").assertStatus(404);
        http.get("/health").assertStatus(200);
        http.get("/ready").assertStatus(200);
        http.get("/metrics").assertStatus(200);
        http.get("/ui/").assertStatus(200);
    }

    @Test
    void spansGoOverGrpcAsChildrenOfTheCallersTrace() throws Exception {
        try (OtlpCollector collector = new OtlpCollector()) {
            try (IndexerApp app = start(true, exportingTo(collector.grpcEndpoint()));
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                traffic(http);
                await().atMost(Duration.ofSeconds(20))
                        .untilAsserted(() -> assertThat(collector.spans()).hasSize(2));
            }
            List<OtlpCollector.Received> spans = collector.spans();
            OtlpCollector.Received register = spans.stream()
                    .filter(s -> s.name().equals("POST /register"))
                    .findFirst()
                    .orElseThrow();
            assertThat(register.protocol()).isEqualTo("grpc");
            assertThat(register.traceId()).isEqualTo(TRACE);
            assertThat(register.parentSpanId()).isEqualTo(CALLER_SPAN);
            assertThat(register.kind()).isEqualTo(Span.SpanKind.SPAN_KIND_SERVER);
            assertThat(register.attributes())
                    .containsEntry("http.request.method", "POST")
                    .containsEntry("http.route", "/register")
                    .containsEntry("http.response.status_code", "201")
                    .containsEntry("x_request_id", "req-7")
                    .containsEntry("kv_indexer.model_name", "m");
            assertThat(register.resource()).containsEntry("service.name", "kv-indexer");
            OtlpCollector.Received query = spans.stream()
                    .filter(s -> s.name().equals("POST /query"))
                    .findFirst()
                    .orElseThrow();
            assertThat(query.traceId()).as("no traceparent: a trace of its own").isNotEqualTo(TRACE);
            assertThat(query.parentSpanId()).isEmpty();
            assertThat(query.attributes())
                    .containsEntry("http.response.status_code", "404")
                    .containsEntry("kv_indexer.model_name", "nope");
            // the log records go where the spans went, the register's in its span
            OtlpCollector.ReceivedLog registered = collector.logs().stream()
                    .filter(l -> l.body().startsWith("registered instance 1 "))
                    .findFirst()
                    .orElseThrow();
            assertThat(registered.protocol()).isEqualTo("grpc");
            assertThat(registered.severity()).isEqualTo("INFO");
            assertThat(registered.traceId()).isEqualTo(TRACE);
            assertThat(registered.spanId()).isEqualTo(register.spanId());
            assertThat(registered.attributes()).containsEntry("target", "io.kvindexer.indexer.registry.WorkerRegistry");
            assertThat(registered.resource()).containsEntry("service.name", "kv-indexer");
            assertThat(collector.logs())
                    .as("the SDK's own records stay home")
                    .noneSatisfy(l -> assertThat(l.attributes().get("target")).startsWith("io.opentelemetry"));
        }
    }

    @Test
    void theVariablesChooseHttpAndTheServiceName() throws Exception {
        try (OtlpCollector collector = new OtlpCollector()) {
            Map<String, String> env = Map.of(
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", collector.httpTracesEndpoint(),
                    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf",
                    "OTEL_SERVICE_NAME", "kv-indexer-eu",
                    "OTEL_BSP_SCHEDULE_DELAY", "50");
            try (IndexerApp app = start(true, env);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                traffic(http);
                await().atMost(Duration.ofSeconds(20))
                        .untilAsserted(() -> assertThat(collector.spans()).hasSize(2));
            }
            assertThat(collector.spans()).allSatisfy(s -> {
                assertThat(s.protocol()).isEqualTo("http/protobuf");
                assertThat(s.resource()).containsEntry("service.name", "kv-indexer-eu");
            });
            assertThat(collector.logs())
                    .as("logs at /v1/logs beside the traces' /v1/traces")
                    .anySatisfy(l -> {
                        assertThat(l.protocol()).isEqualTo("http/protobuf");
                        assertThat(l.body()).startsWith("registered instance 1 ");
                    });
        }
    }

    /**
     * The SDK drops spans silently when its queue is full and gives up on a collector it cannot reach: both are
     * counted on /metrics. Here the collector's port is closed and the queue holds four spans.
     */
    @Test
    void spansTheSdkCouldNotExportAreCountedOnMetrics() throws Exception {
        int closedPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            closedPort = s.getLocalPort();
        }
        Map<String, String> env = Map.of(
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://127.0.0.1:" + closedPort,
                "OTEL_BSP_MAX_QUEUE_SIZE", "4",
                "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "4",
                "OTEL_BSP_SCHEDULE_DELAY", "50",
                "OTEL_EXPORTER_OTLP_TIMEOUT", "500");
        try (IndexerApp app = start(true, env);
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            for (int i = 0; i < 200; i++) {
                http.post("/query", "{\"model_name\":\"nope\",\"token_ids\":[1,2,3,4]}")
                        .assertStatus(404);
            }
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                String metrics = http.get("/metrics").body();
                assertThat(lost(metrics, "spans", "dropped")).isPositive();
                assertThat(lost(metrics, "spans", "failed")).isPositive();
                assertThat(lost(metrics, "spans", "dropped") + lost(metrics, "spans", "failed"))
                        .isLessThanOrEqualTo(200);
                assertThat(metrics)
                        .contains("dynamo_kvindexer_telemetry_lost_total{reason=\"dropped\",signal=\"logs\"}");
            });
        }
        try (IndexerApp quiet = start(false, Map.of());
                HttpTestClient http = new HttpTestClient(quiet.baseUrl())) {
            assertThat(http.get("/metrics").body()).doesNotContain("dynamo_kvindexer_telemetry_lost");
        }
    }

    private static double lost(String metrics, String signal, String reason) {
        String series = "dynamo_kvindexer_telemetry_lost_total{reason=\"" + reason + "\",signal=\"" + signal + "\"} ";
        return metrics.lines()
                .filter(l -> l.startsWith(series))
                .mapToDouble(
                        l -> Double.parseDouble(l.substring(series.length()).strip()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + series + "in\n" + metrics));
    }

    /** DYN_LOGGING_JSONL alone: spans for the log lines' ids, none exported, as Dynamo does. */
    @Test
    void withoutExportTheLogLinesStillCarryTheCallersTrace() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        LineFormatter jsonl = new LineFormatter(true, ZoneOffset.UTC);
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                lines.add(jsonl.format(r)); // formatted on the logging thread, as the console handler does
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        Logger registry = Logger.getLogger("io.kvindexer.indexer");
        registry.addHandler(capture);
        try (OtlpCollector collector = new OtlpCollector()) {
            try (IndexerApp app = start(false, exportingTo(collector.grpcEndpoint()));
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                traffic(http);
            }
            Thread.sleep(300); // six schedule delays: an exporter would have sent by now
            assertThat(collector.spans()).isEmpty();
            assertThat(collector.logs()).isEmpty();
        } finally {
            registry.removeHandler(capture);
        }
        JsonNode registered = lines.stream()
                .map(RequestTracingTest::json)
                .filter(j -> j.get("message").asText().startsWith("registered instance 1 "))
                .findFirst()
                .orElseThrow();
        assertThat(registered.get("trace_id").asText()).isEqualTo(TRACE);
        assertThat(registered.get("span_id").asText()).matches("[0-9a-f]{16}").isNotEqualTo(CALLER_SPAN);
        assertThat(registered.get("x_request_id").asText()).isEqualTo("req-7");
        assertThat(lines.stream().map(RequestTracingTest::json).filter(j -> !j.has("trace_id")))
                .as("lines outside a request have no ids")
                .isNotEmpty();
    }

    private static JsonNode json(String line) {
        try {
            return HttpTestClient.JSON.readTree(line);
        } catch (Exception e) {
            throw new AssertionError(line, e);
        }
    }
}
