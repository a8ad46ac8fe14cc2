package io.kvindexer.indexer.http;

import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;

import java.util.Set;

/** Counts and times every request as Dynamo does: label {@code endpoint} = route or {@code unknown}. */
final class RequestMetricsFilter implements Filter {

    private final IndexerMetrics metrics;
    private final Set<String> known;

    RequestMetricsFilter(IndexerMetrics metrics, Set<String> known) {
        this.metrics = metrics;
        this.known = known;
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        long start = System.nanoTime();
        String path = req.path().rawPath();
        String endpoint = known.contains(path) ? path : "unknown";
        try {
            chain.proceed();
        } finally {
            metrics.httpRequest(endpoint, req.prologue().method().text(), res.status().code(),
                    (System.nanoTime() - start) / 1e9, !"/metrics".equals(endpoint));
        }
    }
}
