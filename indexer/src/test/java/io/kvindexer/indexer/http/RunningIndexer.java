package io.kvindexer.indexer.http;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real indexer with the default configuration, started on an ephemeral port before each test and closed after
 * it (after the test's own {@code @AfterEach}), with a client of its HTTP API. Use as a
 * {@code @RegisterExtension} field where a test needs the whole app over a socket rather than
 * {@link IndexerRoutes}' routing. A test after which an index write had thrown fails (the writers log and go on,
 * so nothing else would show it).
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
        long writeFailures = 0;
        if (app != null) {
            try {
                app.indexers().flushAll().orTimeout(30, TimeUnit.SECONDS).join();
                writeFailures = app.indexers().writeFailures();
            } finally {
                app.close();
            }
        }
        if (writeFailures != 0) {
            throw new AssertionError(writeFailures + " index writes threw during the test (see the log)");
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
