package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerCli;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What a real indexer exposes on /metrics is documented (name and type) in docs/metrics.md and therefore,
 * through DashboardTest, charted on the Grafana dashboard.
 */
class MetricsDocsTest {

    private static final Pattern TYPE = Pattern.compile("^# TYPE (\\S+) (\\S+)$", Pattern.MULTILINE);

    @Test
    void everyExposedIndexerMetricIsDocumentedWithItsType() throws Exception {
        var config = IndexerCli.parse(new String[] {"--port", "0", "--host", "127.0.0.1"}, Map.of())
                .config();
        try (IndexerApp app = IndexerApp.start(config);
                HttpClient http = HttpClient.newBuilder()
                        .connectTimeout(Duration.ofSeconds(5))
                        .build()) {
            String base = app.baseUrl();
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> get(http, base + "/ready").statusCode() == 200);
            // traffic so that labelled series exist: a registration, a query, an error
            post(
                    http,
                    base + "/register",
                    "{\"instance_id\":1,\"endpoint\":\"tcp://127.0.0.1:5557\","
                            + "\"model_name\":\"m\",\"block_size\":16}");
            post(http, base + "/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3]}");
            post(http, base + "/query", "{}");

            Map<String, String> exposed = new TreeMap<>();
            String scrape = get(http, base + "/metrics").body();
            // Prometheus's own parser and linter: the format parses, and no name, type or help breaks its rules
            Promtool.Result lint = Promtool.run(RepoFiles.root(), scrape, "check", "metrics");
            assertThat(lint.exit()).as(lint.output()).isZero();
            assertThat(lint.output()).isBlank();
            Matcher m = TYPE.matcher(scrape);
            while (m.find()) {
                exposed.put(m.group(1), m.group(2));
            }
            assertThat(exposed)
                    .containsKeys(
                            "dynamo_kvindexer_requests_total",
                            "dynamo_kvindexer_errors_total",
                            "dynamo_kvindexer_request_duration_seconds",
                            "dynamo_kvindexer_models",
                            "dynamo_kvindexer_workers",
                            "dynamo_kvindexer_listeners");
            Map<String, String> documented = DashboardTest.documentedMetricTypes();
            // ours all; of the JVM's and the process's, the ones the table names (those the dashboard charts)
            exposed.forEach((name, type) -> {
                if (name.startsWith("dynamo_")) {
                    assertThat(documented)
                            .as("metric %s exposed by the indexer is documented", name)
                            .containsKey(name);
                }
            });
            documented.forEach((name, type) -> {
                if (name.startsWith("jvm_") || name.startsWith("process_")) {
                    assertThat(exposed).as("documented %s is exposed", name).containsEntry(name, type);
                }
            });
            exposed.forEach((name, type) -> {
                if (documented.containsKey(name)) {
                    assertThat(documented.get(name))
                            .as("documented type of %s", name)
                            .isEqualTo(type);
                }
            });
            Set<String> charted = DashboardTest.dashboardMetrics();
            assertThat(charted)
                    .containsAll(exposed.keySet().stream()
                            .filter(name -> name.startsWith("dynamo_"))
                            .toList());
        }
    }

    private static HttpResponse<String> get(HttpClient http, String url) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static void post(HttpClient http, String url, String json) throws Exception {
        http.send(
                HttpRequest.newBuilder(URI.create(url))
                        .timeout(Duration.ofSeconds(10))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
