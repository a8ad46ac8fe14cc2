package io.kvindexer.indexer.http;

import io.helidon.http.HeaderName;
import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Writes every request to the {@link AccessLog} as Dynamo's middleware does: {@code path} is the declared route (or
 * {@code unknown}), {@code model} the one its handler named ({@link AccessLog#model}), {@code trace_id} the value of
 * the trace-id header (or {@code -}), {@code ts} the moment it arrived and {@code duration_ms} the time to its
 * response's head. {@code /metrics} scrapes are not logged, as in Dynamo, where that route sits outside the log's
 * layer.
 */
final class AccessLogFilter implements Filter {

    private final AccessLog log;
    private final Routes routes;
    private final HeaderName traceIdHeader;

    AccessLogFilter(AccessLog log, Routes routes) {
        this.log = log;
        this.routes = routes;
        this.traceIdHeader = HeaderNames.create(log.settings().traceIdHeader());
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        String declared = routes.pathOf(req.path().rawPath());
        if ("/metrics".equals(declared)) {
            chain.proceed();
            return;
        }
        Instant at = Instant.now();
        long start = System.nanoTime();
        String path = declared != null ? declared : "unknown";
        String method = req.prologue().method().text();
        String traceId = req.headers().first(traceIdHeader).orElse("-");
        AtomicBoolean recorded = new AtomicBoolean(); // Helidon may run a beforeSend hook on more than one path
        res.beforeSend(() -> {
            if (recorded.compareAndSet(false, true)) {
                String model = req.context()
                        .get(AccessLog.Model.class)
                        .map(AccessLog.Model::name)
                        .orElse("-");
                log.record(at, traceId, method, path, model, res.status().code(), System.nanoTime() - start);
            }
        });
        chain.proceed();
    }
}
