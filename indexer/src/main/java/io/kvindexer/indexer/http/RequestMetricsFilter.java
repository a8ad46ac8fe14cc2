package io.kvindexer.indexer.http;

import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Counts and times every request as Dynamo does: label {@code endpoint} = the declared route or {@code unknown}.
 *
 * <p>The request is recorded as its response starts, not after the handler returns: a client that reads a response
 * and then scrapes {@code /metrics} must find that response counted (recording afterwards raced with the client's
 * next request). The duration is therefore the time to the response's head, as Dynamo's middleware measures it; a
 * streamed body (a {@code /dump}) is not part of it. An error response sent by the error handler after the chain
 * threw is recorded the same way, with its final status.
 */
record RequestMetricsFilter(IndexerMetrics metrics, Routes routes) implements Filter {

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        long start = System.nanoTime();
        String declared = routes.pathOf(req.path().rawPath());
        String endpoint = declared != null ? declared : "unknown";
        String method = req.prologue().method().text();
        // Helidon runs its beforeSend hooks on every send path it takes and keeps them: count a request once
        AtomicBoolean recorded = new AtomicBoolean();
        res.beforeSend(() -> {
            if (recorded.compareAndSet(false, true)) {
                metrics.httpRequest(
                        endpoint,
                        method,
                        res.status().code(),
                        (System.nanoTime() - start) / 1e9,
                        !"/metrics".equals(endpoint));
            }
        });
        chain.proceed();
    }
}
