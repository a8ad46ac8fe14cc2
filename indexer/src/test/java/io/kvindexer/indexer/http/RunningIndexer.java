package io.kvindexer.indexer.http;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real indexer with the default configuration, started on an ephemeral port before each test and closed after
 * it (after the test's own {@code @AfterEach}), with a client of its HTTP API. Use as a
 * {@code @RegisterExtension} field where a test needs the whole app over a socket rather than
 * {@link IndexerRoutes}' routing.
 */
public final class RunningIndexer implements BeforeEachCallback, AfterEachCallback {

    private IndexerApp app;
    private HttpTestClient http;

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        app = IndexerApp.start(IndexerConfig.defaults());
        http = new HttpTestClient(app.baseUrl());
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (http != null) {
            http.close();
        }
        if (app != null) {
            app.close();
        }
    }

    public IndexerApp app() {
        return app;
    }

    public HttpTestClient http() {
        return http;
    }

    public String baseUrl() {
        return app.baseUrl();
    }
}
