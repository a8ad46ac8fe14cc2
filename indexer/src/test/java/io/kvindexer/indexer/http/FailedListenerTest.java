package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A listener that can never connect ({@code *}, the address an engine binds): {@code failed} with {@code last_error}
 * in /workers and {@code degraded}; /ready lists it, stays 200; the exactness gauge leaves it out. A host name that does not resolve (yet)
 * is not that: it stays pending.
 */
@IndexerRoutes
abstract class FailedListenerTest {

    @Test
    void anEndpointNobodyCanConnectToFailsTheListener(HttpTestClient http) {
        http.post("/register", """
                {"instance_id":1,"endpoint":"tcp://127.0.0.1:1","model_name":"m","block_size":4}""").assertStatus(201);
        http.post("/register", """
                {"instance_id":1,"dp_rank":1,"endpoint":"tcp://*:5557","model_name":"m",
                 "block_size":4}""").assertStatus(201);
        http.post("/register", """
                {"instance_id":2,"endpoint":"tcp://no-such-host.invalid:5557","model_name":"m",
                 "block_size":4}""").assertStatus(201);
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonNode w = worker(http, 1);
            assertThat(w.get("status").asText()).isEqualTo("failed");
            assertThat(w.get("listeners").get("1").get("status").asText()).isEqualTo("failed");
            assertThat(w.get("listeners").get("1").get("last_error").asText()).contains("`*` is the address");
            // it reads nothing: never exact, though a registration without a replay endpoint starts so
            assertThat(w.get("listeners").get("1").get("exactness").asText()).isEqualTo("degraded");
            assertThat(w.get("listeners").get("1").get("exactness_reason").asText())
                    .startsWith("failed: failed to connect ZMQ SUB socket to tcp://*:5557");
            assertThat(w.get("listeners").get("0").has("last_error")).isFalse();
            // a name that does not resolve: pending, and why, tried again (an engine pod's name before the pod)
            JsonNode unresolved = worker(http, 2).get("listeners").get("0");
            assertThat(unresolved.get("status").asText()).isEqualTo("pending");
            assertThat(unresolved.get("connect_error").asText()).isEqualTo("unknown host no-such-host.invalid");
        });
        // issue 13: a failed listener is shown in /ready's body but never takes the replica out of rotation
        HttpTestClient.Response ready = http.get("/ready");
        ready.assertStatus(200);
        JsonNode body = ready.json();
        assertThat(body.get("ready").asBoolean()).isTrue();
        assertThat(body.get("reason").asText()).isEqualTo("ready");
        assertThat(body.get("listeners_failed")).hasSize(1);
        JsonNode failed = body.get("listeners_failed").get(0);
        assertThat(failed.get("instance_id").asLong()).isEqualTo(1);
        assertThat(failed.get("dp_rank").asInt()).isEqualTo(1);
        assertThat(failed.get("endpoint").asText()).isEqualTo("tcp://*:5557");
        assertThat(failed.get("last_error").asText()).contains("`*` is the address");
        // rank 0 is active but nothing listens at its address: listed apart, with why
        await().atMost(Duration.ofSeconds(30))
                .until(() -> http.get("/ready")
                                .json()
                                .path("listeners_not_connected")
                                .findValues("connect_error")
                                .size()
                        == 2);
        JsonNode notConnected = http.get("/ready").json().get("listeners_not_connected");
        assertThat(notConnected).hasSize(2);
        JsonNode refused =
                notConnected.get(0).get("instance_id").asLong() == 1 ? notConnected.get(0) : notConnected.get(1);
        assertThat(refused.get("instance_id").asLong()).isEqualTo(1);
        assertThat(refused.get("dp_rank").asInt()).isZero();
        assertThat(refused.get("endpoint").asText()).isEqualTo("tcp://127.0.0.1:1");
        assertThat(refused.get("connect_error").asText()).containsIgnoringCase("refused");
        assertThat(http.get("/metrics").body())
                .as("the failed rank has no socket: only the active one is counted")
                .contains("dynamo_kvindexer_listeners_by_connection{connection=\"not_connected\"} 2.0")
                .contains("dynamo_kvindexer_listeners_by_connection{connection=\"connected\"} 0.0");
        // queries are still answered: one bad engine does not take the index down
        http.post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"m\"}").assertStatus(200);
        assertThat(http.get("/metrics").body())
                .contains("dynamo_kvindexer_listeners{status=\"failed\"} 1.0")
                .as("the failed rank reads no stream: not counted as exact, nor in any other exactness")
                .contains("dynamo_kvindexer_listeners_by_exactness{exactness=\"exact\"} 2.0")
                .contains("dynamo_kvindexer_listeners_by_exactness{exactness=\"replaying\"} 0.0")
                .contains("dynamo_kvindexer_listeners_by_exactness{exactness=\"degraded\"} 0.0");
    }

    private static JsonNode worker(HttpTestClient http, long instance) {
        return HttpTestClient.worker(http.get("/workers").json(), instance);
    }
}
