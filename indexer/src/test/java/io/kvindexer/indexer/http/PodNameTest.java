package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.hash.BlockHasher;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@code pod_name} (issue 13): optional on {@code /register}, validated, and shown — only when known — in
 * {@code /workers} and in {@code instances[id]} of {@code /query} and {@code /query_by_hash}.
 */
class PodNameTest {

    private static final int[] TOKENS = {1, 2, 3, 4, 5, 6, 7, 8};

    private static String register(long id, int rank, String endpoint, String podJson) {
        return "{\"instance_id\":" + id + ",\"dp_rank\":" + rank + ",\"endpoint\":\"" + endpoint
                + "\",\"model_name\":\"m\",\"block_size\":4" + (podJson == null ? "" : ",\"pod_name\":" + podJson)
                + "}";
    }

    @Test
    void podNameIsShownWhereTheInstanceIs() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl());
                EngineSimulator a = EngineSimulator.start(EngineSimulator.Options.defaults());
                EngineSimulator b = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            http.post("/register", register(1, 0, a.endpoint(), "\"vllm-decode-7c9f-0\""))
                    .assertStatus(201);
            http.post("/register", register(2, 0, b.endpoint(), null)).assertStatus(201);
            await().atMost(Duration.ofSeconds(30)).until(() -> a.subscriptions() >= 1 && b.subscriptions() >= 1);

            JsonNode workers = http.get("/workers").json();
            assertThat(HttpTestClient.worker(workers, 1).get("pod_name").asText())
                    .isEqualTo("vllm-decode-7c9f-0");
            assertThat(HttpTestClient.worker(workers, 2).has("pod_name")).isFalse();

            a.storeSequence(TOKENS, 4).get(30, TimeUnit.SECONDS);
            b.storeSequence(TOKENS, 4).get(30, TimeUnit.SECONDS);
            String query = "{\"model_name\":\"m\",\"token_ids\":"
                    + Arrays.toString(TOKENS).replace(" ", "") + "}";
            await().atMost(Duration.ofSeconds(30))
                    .until(() ->
                            http.post("/query", query).json().path("scores").size() == 2);
            JsonNode instances = http.post("/query", query).json().get("instances");
            assertThat(instances.get("1").get("pod_name").asText()).isEqualTo("vllm-decode-7c9f-0");
            assertThat(instances.get("1").get("longest_matched").asInt()).isEqualTo(8);
            assertThat(instances.get("2").has("pod_name")).isFalse();

            long[] local = BlockHasher.localHashes(TOKENS, 4, BlockHasher.seed(null));
            String byHash = "{\"model_name\":\"m\",\"block_hashes\":["
                    + Arrays.stream(local).mapToObj(Long::toString).collect(Collectors.joining(",")) + "]}";
            JsonNode hashed = http.post("/query_by_hash", byHash).json().get("instances");
            assertThat(hashed.get("1").get("pod_name").asText()).isEqualTo("vllm-decode-7c9f-0");
            assertThat(hashed.get("2").has("pod_name")).isFalse();

            // the pod name goes with the instance
            http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}").assertStatus(200);
            http.post("/register", register(1, 0, a.endpoint(), null)).assertStatus(201);
            assertThat(HttpTestClient.worker(http.get("/workers").json(), 1).has("pod_name"))
                    .isFalse();
        }
    }

    @Test
    void aSecondRankMayNotNameAnotherPod() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            http.post("/register", register(1, 0, "tcp://127.0.0.1:1", null)).assertStatus(201);
            // unknown so far: a later rank makes it known
            http.post("/register", register(1, 1, "tcp://127.0.0.1:2", "\"engine-0\""))
                    .assertStatus(201);
            HttpTestClient.Response other = http.post("/register", register(1, 2, "tcp://127.0.0.1:3", "\"engine-1\""));
            other.assertStatus(409);
            assertThat(other.error()).isEqualTo("instance 1 is already registered for pod engine-0");
            http.post("/register", register(1, 2, "tcp://127.0.0.1:3", "\"engine-0\""))
                    .assertStatus(201);
            http.post("/register", register(1, 3, "tcp://127.0.0.1:4", "null")).assertStatus(201);
            JsonNode w = HttpTestClient.worker(http.get("/workers").json(), 1);
            assertThat(w.get("pod_name").asText()).isEqualTo("engine-0");
            assertThat(w.get("listeners").size()).isEqualTo(4);
        }
    }

    @Test
    void invalidPodNamesAreRefusedWithTheReason() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            String tooLong = "\"" + "a".repeat(254) + "\"";
            HttpTestClient.Response r = http.post("/register", register(1, 0, "tcp://127.0.0.1:1", tooLong));
            r.assertStatus(400);
            assertThat(r.error()).isEqualTo("invalid pod_name: 254 characters; the limit is 253");
            for (String bad : new String[] {"\"\"", "\"Engine-0\"", "\"-engine\"", "\"engine_0\"", "\"engine-\""}) {
                r = http.post("/register", register(1, 0, "tcp://127.0.0.1:1", bad));
                assertThat(r.status()).as(bad).isEqualTo(400);
                assertThat(r.error()).as(bad).startsWith("invalid pod_name `").contains("Kubernetes pod name");
            }
            r = http.post("/register", register(1, 0, "tcp://127.0.0.1:1", "7"));
            r.assertStatus(422);
            assertThat(r.error()).contains("pod_name");
            assertThat(http.get("/workers").json()).isEmpty(); // nothing half-registered
            String longest = "\"" + "a".repeat(253) + "\"";
            http.post("/register", register(1, 0, "tcp://127.0.0.1:1", longest)).assertStatus(201);
            http.post("/register", register(2, 0, "tcp://127.0.0.1:1", "\"engine.pool-0.a1\""))
                    .assertStatus(201);
        }
    }
}
