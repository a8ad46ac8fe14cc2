package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.metrics.MetricsEndpointTest;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** {@code --demo}: three live simulated engines whose blocks answer the printed example query. */
class DemoTest {

    @Test
    void demoShowsLiveWorkersQueriesAndMetrics() throws Exception {
        IndexerConfig cfg = IndexerCli.parse(new String[] {"--demo", "--port", "0", "--host", "127.0.0.1"}, Map.of())
                .config();
        try (IndexerApp app = IndexerApp.start(cfg);
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                JsonNode workers = http.get("/workers").json();
                assertThat(workers).hasSize(3);
                assertThat(workers.findValuesAsText("status")).containsOnly("active");
            });
            assertThat(app.demoCurls())
                    .contains(
                            "curl -s " + app.baseUrl() + "/workers",
                            "curl -s -X POST " + app.baseUrl() + "/query",
                            "curl -s " + app.baseUrl() + "/metrics");
            assertThat(app.demoCurls())
                    .contains(
                            "web console: " + app.baseUrl() + "/ui/",
                            app.baseUrl() + "/ui/#query?model_name=demo-model&token_ids=1,2,3,");
            int[] q = app.demoQuery();
            String body = "{\"model_name\":\"demo-model\",\"token_ids\":["
                    + Arrays.stream(q).mapToObj(Integer::toString).collect(Collectors.joining(",")) + "]}";
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                JsonNode r = http.post("/query", body).json();
                // engine 1 served exactly this prompt; engine 2 shares its 64-token system prompt
                assertThat(r.at("/scores/1/0").asInt()).isEqualTo(q.length / 16 * 16);
                assertThat(r.at("/scores/2/0").asInt()).isGreaterThanOrEqualTo(64);
            });
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                Map<String, Double> m =
                        MetricsEndpointTest.parse(http.get("/metrics").body());
                assertThat(m.get("dynamo_kvindexer_workers")).isEqualTo(3.0);
                assertThat(m.get("dynamo_kvindexer_batches_applied_total")).isGreaterThanOrEqualTo(2.0);
            });
        }
    }
}
