package io.kvindexer.indexer.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Series a real replica exposes over {@code /metrics} for what alerts and dashboards need: labels a client cannot
 * multiply, and series that exist (at 0) before the event they count, so that {@code increase()} sees the first one.
 */
class MetricSeriesBoundsTest {

    @Test
    void requestMethodsOutsideTheStandardOnesShareOneSeries() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            for (String method : new String[] {"FOO1", "FOO2", "FOO3"}) {
                http.method(method, "/workers").assertStatus(405);
            }
            http.get("/workers").assertStatus(200);

            String body = http.get("/metrics").body();
            assertThat(body).doesNotContain("method=\"FOO");
            assertThat(http.metric("dynamo_kvindexer_requests_total{endpoint=\"/workers\",method=\"other\"}"))
                    .isEqualTo(3.0);
            assertThat(http.metric("dynamo_kvindexer_requests_total{endpoint=\"/workers\",method=\"GET\"}"))
                    .isEqualTo(1.0);
        }
    }

    @Test
    void snapshotEventsAreExposedAtZeroFromTheStart(@TempDir Path dir) throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> c.snapshotDir = dir));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            for (String event : new String[] {"write_failed", "damaged"}) {
                assertThat(http.metric("dynamo_kvindexer_snapshots_total{event=\"" + event + "\"}"))
                        .as(event)
                        .isEqualTo(0.0);
            }
        }
    }

    @Test
    void withoutASnapshotDirThereAreNoSnapshotSeries() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            assertThat(http.get("/metrics").body()).doesNotContain("dynamo_kvindexer_snapshots_total{");
        }
    }
}
