package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerConfig;
import org.junit.jupiter.api.Test;

/** {@code /test/pause_listener}, {@code /test/resume_listener} when DYN_KV_INDEXER_TEST_ENDPOINTS is on (compatibility.md, HTTP API). */
@IndexerRoutes
abstract class ListenerControlTest {

    @IndexerRoutes.Config
    static IndexerConfig config() {
        return IndexerConfig.defaults().with(c -> c.testEndpoints = true);
    }

    @Test
    void pauseAndResumeWithDynamoTexts(HttpTestClient http) {
        http.post("/register", """
                {"instance_id":1,"endpoint":"tcp://127.0.0.1:1","model_name":"m","block_size":4}""").assertStatus(201);

        // listener_control_endpoints_are_mounted_when_enabled: a malformed body is a 4xx, not a 404
        HttpTestClient.Response bad = http.post("/test/pause_listener", "{\"dp_rank\":0}");
        assertThat(bad.status()).isBetween(400, 499).isNotEqualTo(404);
        assertThat(bad.error()).contains("instance_id");

        http.post("/test/pause_listener", "{\"instance_id\":1}").assertOk(200);
        assertThat(http.get("/workers").json().get(0).get("status").asText()).isEqualTo("paused");
        assertThat(http.get("/workers")
                        .json()
                        .get(0)
                        .get("listeners")
                        .get("0")
                        .get("status")
                        .asText())
                .isEqualTo("paused");

        assertThat(http.post("/test/pause_listener", "{\"instance_id\":1,\"dp_rank\":0}")
                        .assertStatus(409)
                        .error())
                .isEqualTo("instance 1 dp_rank 0 cannot be paused from status paused");

        http.post("/test/resume_listener", "{\"instance_id\":1,\"dp_rank\":null}")
                .assertStatus(200);
        assertThat(http.get("/workers").json().get(0).get("status").asText()).isIn("pending", "active");

        assertThat(http.post("/test/resume_listener", "{\"instance_id\":1}")
                        .assertStatus(409)
                        .error())
                .matches("instance 1 dp_rank 0 cannot be resumed from status (pending|active)");

        assertThat(http.post("/test/pause_listener", "{\"instance_id\":2}")
                        .assertStatus(404)
                        .error())
                .isEqualTo("instance 2 not found");
        assertThat(http.post("/test/resume_listener", "{\"instance_id\":1,\"dp_rank\":3}")
                        .assertStatus(404)
                        .error())
                .isEqualTo("instance 1 dp_rank 3 not found");
    }
}
