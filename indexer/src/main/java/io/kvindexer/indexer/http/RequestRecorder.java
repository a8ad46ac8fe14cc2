package io.kvindexer.indexer.http;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Scope;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Counts and times every request as Dynamo does (label {@code endpoint} = the declared route or {@code unknown}) and,
 * with {@code --access-log}, writes its record as Dynamo's middleware does: {@code path} is that same route, {@code
 * model} the one its handler named ({@link AccessLog#model}), {@code trace_id} the value of the trace-id header (or,
 * without it, the trace id of the request's span when requests get spans, else {@code -}), {@code ts} the moment it
 * arrived; with request spans it begins the request's span ({@link RequestTracing}), current while the request runs,
 * and ends it. One route lookup and one hook serve them all.
 *
 * <p>The request is recorded as its response starts, not after the handler returns: a client that reads a response
 * and then scrapes {@code /metrics} must find that response counted (recording afterwards raced with the client's
 * next request). The duration is therefore the time to the response's head, as Dynamo's middleware measures it; a
 * streamed body (a {@code /dump}) is not part of it. An error response sent by the error handler after the chain
 * threw is recorded the same way, with its final status. {@code /metrics} scrapes are not timed nor logged, as in
 * Dynamo, where that route sits outside both layers.
 */
final class RequestRecorder implements Filter {

    /**
     * The most characters of a client's text (a header's value, its method) an access-log record, a span or a log
     * line carries: the server takes a request line of 4 KB and headers of 16 KB, on every line of the request.
     */
    static final int MAX_ECHOED_CHARS = 256;

    private final IndexerMetrics metrics;
    private final Routes routes;
    private final AccessLog accessLog;
    private final HeaderName traceIdHeader;
    private final RequestTracing tracing;

    /**
     * @param accessLog null without {@code --access-log}
     * @param tracing   null when requests get no spans
     */
    RequestRecorder(IndexerMetrics metrics, Routes routes, AccessLog accessLog, RequestTracing tracing) {
        this.metrics = metrics;
        this.routes = routes;
        this.accessLog = accessLog;
        this.tracing = tracing;
        this.traceIdHeader = accessLog == null
                ? null
                : HeaderNames.create(accessLog.settings().traceIdHeader());
    }

    @Override
    @SuppressWarnings("try") // the scope is only closed: that ends the span's being current
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        Instant at = accessLog == null ? null : Instant.now();
        long start = System.nanoTime();
        String declared = routes.pathOf(req.path().rawPath());
        String endpoint = declared != null ? declared : "unknown";
        String method = echoed(req.prologue().method().text());
        boolean scrape = "/metrics".equals(endpoint);
        Span span = tracing == null ? null : tracing.begin(req, method, declared);
        String traceId = accessLog == null || scrape
                ? null
                : req.headers()
                        .first(traceIdHeader)
                        .map(RequestRecorder::echoed)
                        .orElse(span == null ? "-" : span.getSpanContext().getTraceId());
        // Helidon runs its beforeSend hooks on every send path it takes and keeps them: record a request once
        AtomicBoolean recorded = new AtomicBoolean();
        res.beforeSend(() -> {
            if (recorded.compareAndSet(false, true)) {
                long nanos = System.nanoTime() - start;
                int status = res.status().code();
                metrics.httpRequest(endpoint, method, status, nanos / 1e9, !scrape);
                if (traceId != null) {
                    String model = req.context()
                            .get(AccessLog.Model.class)
                            .map(AccessLog.Model::name)
                            .orElse("-");
                    accessLog.record(at, traceId, method, endpoint, model, status, nanos);
                }
                if (span != null) {
                    RequestTracing.end(span, status);
                }
            }
        });
        if (span == null) {
            chain.proceed();
            return;
        }
        try (Scope ignored = span.makeCurrent()) {
            chain.proceed();
        }
    }

    /** {@code text} cut at {@link #MAX_ECHOED_CHARS}. */
    static String echoed(String text) {
        return text.length() <= MAX_ECHOED_CHARS ? text : text.substring(0, MAX_ECHOED_CHARS);
    }
}
