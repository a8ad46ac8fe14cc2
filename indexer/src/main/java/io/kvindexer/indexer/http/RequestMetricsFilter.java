package io.kvindexer.indexer.http;

import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.kvindexer.indexer.metrics.IndexerMetrics;

/** Counts and times every request as Dynamo does: label {@code endpoint} = the declared route or {@code unknown}. */
record RequestMetricsFilter(IndexerMetrics metrics, Routes routes) implements Filter {

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        long start = System.nanoTime();
        String path = req.path().rawPath();
        String declared = routes.pathOf(path);
        String endpoint = declared != null ? declared : "unknown";
        try {
            chain.proceed();
        } finally {
            metrics.httpRequest(
                    endpoint,
                    req.prologue().method().text(),
                    res.status().code(),
                    (System.nanoTime() - start) / 1e9,
                    !"/metrics".equals(endpoint));
        }
    }
}
