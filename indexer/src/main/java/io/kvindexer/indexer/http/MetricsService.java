package io.kvindexer.indexer.http;

import io.helidon.http.HeaderNames;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import java.io.ByteArrayOutputStream;
import java.io.IOException;

/** {@code GET /metrics}: the Prometheus exposition, format negotiated from {@code Accept}. */
record MetricsService(IndexerMetrics metrics) implements ApiService {

    @Override
    public void routes(Routes routes) {
        routes.get("/metrics", Routes.Access.OPEN, this::scrape);
    }

    private void scrape(ServerRequest req, ServerResponse res) throws IOException {
        String accept = req.headers().first(HeaderNames.ACCEPT).orElse(null);
        ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
        String type = metrics.write(accept, out);
        res.header(HeaderNames.CONTENT_TYPE, type);
        res.send(out.toByteArray());
    }
}
