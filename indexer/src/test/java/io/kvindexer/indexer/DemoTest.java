package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.metrics.MetricsEndpointTest;
import io.kvindexer.indexer.security.TestCa;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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

    /**
     * Over HTTPS the printed lines trust {@code --tls-ca-file}: curl trusts the system's CAs only, so every line a
     * user pasted failed with "unable to get local issuer certificate" when a private CA (security.md's by hand)
     * issued the certificate.
     */
    @Test
    void overHttpsTheCurlLinesTrustTheCaFile(@TempDir Path dir) throws Exception {
        TestCa ca = TestCa.create("demo CA");
        Path cert = dir.resolve("tls.crt");
        Path key = dir.resolve("tls.key");
        ca.issue("replica").write(cert, key);
        Files.createDirectories(dir.resolve("my ca"));
        Path caFile = ca.writeCert(dir.resolve("my ca/ca.crt"));
        IndexerConfig cfg = IndexerCli.parse(
                        new String[] {
                            "--demo",
                            "--port",
                            "0",
                            "--host",
                            "127.0.0.1",
                            "--tls-cert-file",
                            cert.toString(),
                            "--tls-key-file",
                            key.toString(),
                            "--tls-ca-file",
                            caFile.toString()
                        },
                        Map.of())
                .config();
        try (IndexerApp app = IndexerApp.start(cfg)) {
            String curl = "curl -s --cacert '" + caFile + "' ";
            assertThat(app.demoCurls())
                    .contains(
                            curl + app.baseUrl() + "/workers",
                            curl + "-X POST " + app.baseUrl() + "/query",
                            curl + app.baseUrl() + "/metrics");
            // what the lines ask, trusting that CA only, is answered
            try (HttpClient client =
                    HttpClient.newBuilder().sslContext(ca.clientContext()).build()) {
                assertThat(client.send(
                                        HttpRequest.newBuilder(URI.create(app.baseUrl() + "/workers"))
                                                .build(),
                                        HttpResponse.BodyHandlers.discarding())
                                .statusCode())
                        .isEqualTo(200);
            }
        }
        assertThat(Demo.shellWord("/tls/ca.crt")).isEqualTo("/tls/ca.crt");
        assertThat(Demo.shellWord("/it's/ca.crt")).isEqualTo("'/it'\\''s/ca.crt'");
    }

    /**
     * The printed example answers as printed however long the demo runs: engine 1's 256-block cache evicts the least
     * recently used blocks, and hundreds of generated requests (what a few minutes of the demo serve) once took the
     * example's conversation out of it, so that a user pasting the query got 64 tokens for engine 1, not all of them.
     */
    @Test
    void theExampleQueryStillMatchesAfterMinutesOfTraffic() throws Exception {
        IndexerConfig cfg = IndexerCli.parse(new String[] {"--demo", "--port", "0", "--host", "127.0.0.1"}, Map.of())
                .config();
        try (IndexerApp app = IndexerApp.start(cfg);
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            int[] q = app.demoQuery();
            String body = "{\"model_name\":\"demo-model\",\"token_ids\":["
                    + Arrays.stream(q).mapToObj(Integer::toString).collect(Collectors.joining(",")) + "]}";
            int all = q.length / 16 * 16;
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(http.post("/query", body)
                                    .json()
                                    .at("/scores/1/0")
                                    .asInt())
                            .isEqualTo(all));

            Random random = new Random(1);
            for (int i = 0; i < 600; i++) { // about 200 requests on engine 1, some 1,400 blocks: its cache many times
                app.demo().trafficStep(random);
            }
            long published = app.demo().lastSeq(0);
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                long applied = -1;
                for (JsonNode w : http.get("/workers").json()) {
                    if (w.get("instance_id").asLong() == 1) {
                        applied = w.at("/listeners/0/last_seq").asLong(-1);
                    }
                }
                assertThat(applied).as("engine 1's batches applied").isGreaterThanOrEqualTo(published);
            });
            JsonNode r = http.post("/query", body).json();
            assertThat(r.at("/scores/1/0").asInt()).as("engine 1 in %s", r).isEqualTo(all);
        }
    }

    /**
     * A demo started again on its own {@code --snapshot-dir} restores the previous run's registrations, whose engines
     * are gone: this run's engines replace them once the recovery is over (registering them during it raced the
     * restore, and the start failed with "already registered" when the restore won).
     */
    @Test
    void aDemoStartedAgainOnItsSnapshotsReplacesThePreviousRunsEngines(@TempDir Path dir) throws Exception {
        String[] args = {"--demo", "--port", "0", "--host", "127.0.0.1", "--snapshot-dir", dir.toString()};
        List<String> before;
        try (IndexerApp first =
                        IndexerApp.start(IndexerCli.parse(args, Map.of()).config());
                HttpTestClient http = new HttpTestClient(first.baseUrl())) {
            before = awaitThreeActive(http);
        } // a last snapshot at the stop
        for (int restart = 0; restart < 3; restart++) {
            try (IndexerApp again =
                            IndexerApp.start(IndexerCli.parse(args, Map.of()).config());
                    HttpTestClient http = new HttpTestClient(again.baseUrl())) {
                List<String> now = awaitThreeActive(http);
                assertThat(now).as("this run's engines, not the last run's").doesNotContainAnyElementsOf(before);
                assertThat(http.metric("dynamo_kvindexer_startup_recovery_seconds{source=\"snapshot\"}"))
                        .isGreaterThanOrEqualTo(0);
                int[] q = again.demoQuery();
                String body = "{\"model_name\":\"demo-model\",\"token_ids\":["
                        + Arrays.stream(q).mapToObj(Integer::toString).collect(Collectors.joining(",")) + "]}";
                await().atMost(Duration.ofSeconds(30))
                        .untilAsserted(() -> assertThat(http.post("/query", body)
                                        .json()
                                        .at("/scores/1/0")
                                        .asInt())
                                .isEqualTo(q.length / 16 * 16));
                before = now;
            }
        }
    }

    /** An instance id the user registers with {@code --workers} stays theirs: the demo does not start over it. */
    @Test
    void aDemoDoesNotReplaceAWorkersFlagRegistration() throws Exception {
        String[] args = {
            "--demo",
            "--port",
            "0",
            "--host",
            "127.0.0.1",
            "--block-size",
            "16",
            "--model-name",
            "demo-model",
            "--workers",
            "2=tcp://127.0.0.1:9"
        };
        IndexerConfig cfg = IndexerCli.parse(args, Map.of()).config();
        assertThatThrownBy(() -> IndexerApp.start(cfg).close())
                .hasMessageContaining("demo registration failed")
                .hasMessageContaining("instance 2");
    }

    /** Waits for the demo's three workers, all active; returns their endpoints. */
    private static List<String> awaitThreeActive(HttpTestClient http) {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            JsonNode workers = http.get("/workers").json();
            assertThat(workers).hasSize(3);
            assertThat(workers.findValuesAsText("status")).containsOnly("active");
        });
        List<String> endpoints = http.get("/workers").json().findValuesAsText("endpoint");
        assertThat(endpoints).hasSize(3);
        return endpoints;
    }
}
