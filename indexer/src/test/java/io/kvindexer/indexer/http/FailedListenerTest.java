package io.kvindexer.indexer.http;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** A listener that cannot connect: {@code failed} with {@code last_error} in /workers, and /ready says so. */
@IndexerRoutes
abstract class FailedListenerTest {

    @Test
    void unresolvableEngineHostFailsTheListener(HttpTestClient http) {
        assertThat(http.post("/register", """
                {"instance_id":1,"endpoint":"tcp://127.0.0.1:1","model_name":"m","block_size":4}""").status())
                .isEqualTo(201);
        assertThat(http.post("/register", """
                {"instance_id":1,"dp_rank":1,"endpoint":"tcp://no-such-host.invalid:5557","model_name":"m",
                 "block_size":4}""").status()).isEqualTo(201);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonNode w = http.get("/workers").json().get(0);
            assertThat(w.get("status").asText()).isEqualTo("failed");
            assertThat(w.get("listeners").get("1").get("status").asText()).isEqualTo("failed");
            assertThat(w.get("listeners").get("1").get("last_error").asText()).contains("no-such-host.invalid");
            assertThat(w.get("listeners").get("0").has("last_error")).isFalse();
        });
        HttpTestClient.Response ready = http.get("/ready");
        assertThat(ready.status()).isEqualTo(503);
        assertThat(ready.body()).isEqualTo("{\"ready\":false,\"reason\":\"listeners_failed\"}");
        // queries are still answered: one bad engine does not take the index down
        assertThat(http.post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"m\"}").status()).isEqualTo(200);
        assertThat(http.get("/metrics").body()).contains("dynamo_kvindexer_listeners{status=\"failed\"} 1.0");
    }
}
