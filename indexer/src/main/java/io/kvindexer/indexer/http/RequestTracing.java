package io.kvindexer.indexer.http;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.http.ServerRequestHeaders;
import io.helidon.webserver.http.RoutingRequest;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.kvindexer.logging.LogContext;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * One OpenTelemetry server span per API request ({@code POST /query}, ...), the child of the caller's W3C {@code
 * traceparent} when it sends one; {@link RequestRecorder} begins it, makes it current while the request runs (so its
 * log lines carry the span's ids) and ends it as the response starts, beside the request's metrics. Probes, scrapes and the console's files get none: a
 * kubelet would otherwise fill the traces. The SDK is OpenTelemetry's own, set up by its autoconfigure module from
 * the {@code OTEL_*} variables, with our defaults beneath them.
 */
public final class RequestTracing implements AutoCloseable {

    static final AttributeKey<String> METHOD = AttributeKey.stringKey("http.request.method");
    static final AttributeKey<String> ROUTE = AttributeKey.stringKey("http.route");
    static final AttributeKey<String> PATH = AttributeKey.stringKey("url.path");
    static final AttributeKey<Long> STATUS = AttributeKey.longKey("http.response.status_code");
    /** Dynamo's name for a caller's {@code x-request-id} on its spans and log lines */
    static final AttributeKey<String> REQUEST_ID = AttributeKey.stringKey("x_request_id");

    static final AttributeKey<String> MODEL = AttributeKey.stringKey("kv_indexer.model_name");

    private static final HeaderName X_REQUEST_ID = HeaderNames.create("x-request-id");

    private static final Set<String> UNTRACED = Set.of("/metrics", "/health", "/ready");

    /** W3C trace context reads named headers only ({@code keys} is deprecated, and no propagator here needs it) */
    private static final TextMapGetter<ServerRequestHeaders> HEADERS = (headers, key) ->
            headers == null ? null : headers.first(HeaderNames.create(key)).orElse(null);

    private static final SpanProcessor NOWHERE = new SpanProcessor() {
        @Override
        public void onStart(Context parent, ReadWriteSpan span) {}

        @Override
        public boolean isStartRequired() {
            return false;
        }

        @Override
        public void onEnd(ReadableSpan span) {}

        @Override
        public boolean isEndRequired() {
            return false;
        }
    };

    /** whether any SDK was started in this process */
    private static volatile boolean started;

    private final OpenTelemetrySdk sdk;
    /** the log records' way to the collector; null when nothing is exported */
    private OtlpLogHandler logs;
    /** what the SDK dropped or could not export; null when nothing is exported */
    private TelemetryLosses losses;

    private final Tracer tracer;
    private final TextMapPropagator propagator;

    private RequestTracing(OpenTelemetrySdk sdk) {
        started = true;
        LogContext.install(RequestTracing::currentIds); // the JSON log lines carry the span's ids
        this.sdk = sdk;
        OpenTelemetry otel = sdk;
        this.tracer = otel.getTracer("io.kvindexer.indexer");
        this.propagator = otel.getPropagators().getTextMapPropagator();
    }

    /** The SDK for {@code settings}; null when requests get no spans. */
    public static RequestTracing start(TracingSettings settings) {
        if (!settings.spans()) {
            return null;
        }
        if (!settings.export()) {
            // ids for the log lines only, as Dynamo makes them: a provider that makes spans and sends them nowhere
            // (the SDK hands out its no-op tracer while it has no processor at all, so it gets one that does nothing)
            return new RequestTracing(OpenTelemetrySdk.builder()
                    .setTracerProvider(SdkTracerProvider.builder()
                            .addSpanProcessor(NOWHERE)
                            .build())
                    .setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
                    .build());
        }
        Map<String, String> fromEnv = otelProperties(settings.env());
        logsBesideTraces(fromEnv);
        TelemetryLosses losses = new TelemetryLosses();
        OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder()
                .addPropertiesSupplier(RequestTracing::defaults)
                .addPropertiesCustomizer(config -> fromEnv) // the environment handed to us wins over the JVM's
                .addMeterProviderCustomizer((meters, config) -> meters.registerMetricReader(losses))
                .disableShutdownHook() // the indexer closes it after its server, with the last spans
                .build()
                .getOpenTelemetrySdk();
        RequestTracing tracing = new RequestTracing(sdk);
        tracing.losses = losses;
        tracing.logs = new OtlpLogHandler(sdk.getSdkLoggerProvider());
        java.util.logging.Logger.getLogger("").addHandler(tracing.logs);
        return tracing;
    }

    /**
     * Dynamo sends the logs where the traces go unless {@code OTEL_EXPORTER_OTLP_LOGS_ENDPOINT} says otherwise (the
     * SDK alone would send them to {@code OTEL_EXPORTER_OTLP_ENDPOINT} or localhost); an HTTP traces URL's {@code
     * /v1/traces} becomes {@code /v1/logs}.
     */
    static void logsBesideTraces(Map<String, String> properties) {
        String traces = properties.get("otel.exporter.otlp.traces.endpoint");
        if (traces != null && !properties.containsKey("otel.exporter.otlp.logs.endpoint")) {
            properties.put(
                    "otel.exporter.otlp.logs.endpoint",
                    traces.endsWith("/v1/traces")
                            ? traces.substring(0, traces.length() - "traces".length()) + "logs"
                            : traces);
        }
        String protocol = properties.get("otel.exporter.otlp.traces.protocol");
        if (protocol != null && !properties.containsKey("otel.exporter.otlp.logs.protocol")) {
            properties.put("otel.exporter.otlp.logs.protocol", protocol);
        }
    }

    /**
     * Ours where the variables say nothing: Dynamo's OTLP over gRPC, traces and logs, no metrics (Prometheus has
     * them), and batches of 2,048 spans from a queue of 8,192 (the SDK's 512 and 2,048 dropped most spans above ~60 k
     * requests/s and took a third more CPU a span in {@code TracingBench}; the queue holds a few MB at most).
     */
    private static Map<String, String> defaults() {
        return Map.of(
                "otel.service.name", "kv-indexer",
                "otel.traces.exporter", "otlp",
                "otel.metrics.exporter", "none",
                "otel.logs.exporter", "otlp",
                "otel.exporter.otlp.protocol", "grpc",
                "otel.bsp.max.export.batch.size", "2048",
                "otel.bsp.max.queue.size", "8192");
    }

    /** {@code OTEL_EXPORTER_OTLP_ENDPOINT} is {@code otel.exporter.otlp.endpoint}, as the SDK reads its variables. */
    static Map<String, String> otelProperties(Map<String, String> env) {
        Map<String, String> out = new HashMap<>();
        env.forEach((name, value) -> {
            if (name.startsWith("OTEL_") && !value.isBlank()) {
                out.put(name.toLowerCase(Locale.ROOT).replace('_', '.'), value);
            }
        });
        return out;
    }

    /**
     * The ids of the current thread's span for the JSON log lines, and the caller's {@code x-request-id} as Dynamo
     * puts it on them; empty outside a span.
     */
    public static Map<String, String> currentIds() {
        Span span = Span.current();
        SpanContext c = span.getSpanContext();
        if (!c.isValid()) {
            return Map.of();
        }
        String requestId = span instanceof ReadableSpan ours ? ours.getAttribute(REQUEST_ID) : null;
        return requestId == null
                ? Map.of("trace_id", c.getTraceId(), "span_id", c.getSpanId())
                : Map.of("trace_id", c.getTraceId(), "span_id", c.getSpanId(), "x_request_id", requestId);
    }

    /** Names the request's model on its span (a no-op outside a recording one). */
    static void model(String model) {
        if (!started) {
            return; // the query path pays nothing without spans
        }
        Span span = Span.current();
        if (span.isRecording()) {
            span.setAttribute(MODEL, model);
        }
    }

    /**
     * Starts the span of a request to {@code route} (the declared one), the child of the caller's {@code traceparent};
     * null for a route that gets none (probes, scrapes, the console's files, no route at all).
     */
    Span begin(RoutingRequest req, String method, String route) {
        if (route == null || UNTRACED.contains(route) || route.startsWith("/ui")) {
            return null;
        }
        Context parent = propagator.extract(Context.root(), req.headers(), HEADERS);
        var builder = tracer.spanBuilder(method + " " + route)
                .setParent(parent)
                .setSpanKind(SpanKind.SERVER)
                .setAttribute(METHOD, method)
                .setAttribute(ROUTE, route)
                .setAttribute(PATH, req.path().rawPath());
        req.headers().first(X_REQUEST_ID).ifPresent(id -> builder.setAttribute(REQUEST_ID, RequestRecorder.echoed(id)));
        return builder.startSpan();
    }

    /** Ends a request's span as its answer starts: its status, and failed on a 5xx. */
    static void end(Span span, int status) {
        span.setAttribute(STATUS, (long) status);
        if (status >= 500) {
            span.setStatus(StatusCode.ERROR);
        }
        span.end();
    }

    /**
     * Hands {@code to} what the SDK lost since the start, per signal ({@code spans}, {@code logs}) and reason
     * ({@code dropped}: a full queue; {@code failed}: the collector refused them or could not be reached); nothing
     * when nothing is exported.
     */
    public void reportLosses(IndexerMetrics.LossCount to) {
        if (losses != null) {
            losses.report(to);
        }
    }

    /** Exports what is still queued, then stops the SDK. */
    @Override
    public void close() {
        if (logs != null) {
            java.util.logging.Logger.getLogger("").removeHandler(logs);
        }
        sdk.shutdown().join(5, TimeUnit.SECONDS);
    }
}
