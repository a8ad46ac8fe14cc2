package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code /workers} and {@code /metrics} when a registered engine stops and comes back (real indexer, real simulated
 * engine on a fixed port): Dynamo's {@code status} stays {@code active} (it is {@code pending} only until the first
 * connection); our additive {@code connected},
 * {@code disconnected_since_ms} and {@code last_error} tell, and {@code dynamo_kvindexer_engine_disconnects_total}
 * counts it, and {@code /ready} lists it in {@code listeners_disconnected} while it stays 200.
 */
class EngineDisconnectRoutesTest {

    private static final String DISCONNECTS = "dynamo_kvindexer_engine_disconnects_total";

    @RegisterExtension
    final TestResources resources = new TestResources();

    private HttpTestClient http;

    @Test
    void aStoppedEngineShowsAsDisconnectedInWorkersAndIsCounted() throws Exception {
        IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
        resources.add(app);
        http = new HttpTestClient(app.baseUrl());
        resources.add(http);
        String endpoint = "tcp://127.0.0.1:" + freePort();
        EngineSimulator first = resources.simulatorAt(endpoint, null);
        http.post(
                        "/register",
                        "{\"instance_id\":7,\"endpoint\":\"" + endpoint + "\",\"model_name\":\"m\",\"block_size\":4}")
                .assertStatus(201);

        await().atMost(Duration.ofSeconds(60))
                .until(() -> listener().path("connected").asBoolean());
        JsonNode up = listener();
        List<String> fields = new ArrayList<>();
        up.fieldNames().forEachRemaining(fields::add);
        assertThat(fields).containsExactly("endpoint", "status", "connected", "exactness", "exactness_since_ms");
        assertThat(up.get("status").asText()).isEqualTo("active");
        assertThat(metric()).isZero();
        assertThat(connections("connected")).isEqualTo(1);
        assertThat(connections("disconnected")).isZero();
        assertThat(connections("not_connected")).isZero();

        long beforeStop = System.currentTimeMillis();
        first.close();
        await().atMost(Duration.ofSeconds(5)).until(() -> listener().has("disconnected_since_ms"));
        JsonNode worker = http.get("/workers").json().get(0);
        JsonNode down = worker.get("listeners").get("0");
        assertThat(worker.get("status").asText()).as("Dynamo's status is kept").isEqualTo("active");
        assertThat(down.get("status").asText()).isEqualTo("active");
        assertThat(down.get("connected").asBoolean()).isFalse();
        assertThat(down.get("connected").isBoolean()).isTrue();
        assertThat(down.get("disconnected_since_ms").asLong()).isBetween(beforeStop, System.currentTimeMillis());
        assertThat(down.get("last_error").asText())
                .startsWith("engine connection lost at ")
                .endsWith("; reconnecting (events are missed meanwhile)");
        assertThat(metric()).isEqualTo(1.0);
        assertThat(connections("disconnected")).isEqualTo(1);
        assertThat(connections("connected")).isZero();
        JsonNode ready = http.get("/ready").json();
        assertThat(ready.get("ready").asBoolean())
                .as("a lost engine never makes the replica unready")
                .isTrue();
        assertThat(ready.has("listeners_failed") || ready.has("listeners_pending"))
                .isFalse();
        assertThat(ready.get("listeners_disconnected")).hasSize(1);
        JsonNode listed = ready.get("listeners_disconnected").get(0);
        assertThat(listed.get("instance_id").asLong()).isEqualTo(7);
        assertThat(listed.get("dp_rank").asInt()).isZero();
        assertThat(listed.get("endpoint").asText()).isEqualTo(endpoint);
        assertThat(listed.get("disconnected_since_ms").asLong())
                .isEqualTo(down.get("disconnected_since_ms").asLong());
        assertThat(listed.get("last_error").asText()).startsWith("engine connection lost at ");
        // why it is still down: its reconnects are refused (nothing listens on the port now)
        await().atMost(Duration.ofSeconds(10))
                .until(() -> http.get("/ready")
                        .json()
                        .path("listeners_disconnected")
                        .path(0)
                        .has("connect_error"));
        assertThat(http.get("/ready")
                        .json()
                        .get("listeners_disconnected")
                        .get(0)
                        .get("connect_error")
                        .asText())
                .containsIgnoringCase("refused");
        assertThat(listener().get("connect_error").asText()).containsIgnoringCase("refused");

        resources.simulatorAt(endpoint, null); // the engine comes back on the same port
        await().atMost(Duration.ofSeconds(60))
                .until(() -> listener().path("connected").asBoolean());
        JsonNode back = listener();
        assertThat(back.has("disconnected_since_ms")).isFalse();
        assertThat(back.has("connect_error")).as("gone with the handshake").isFalse();
        assertThat(back.has("last_error"))
                .as("cleared once the connection is back")
                .isFalse();
        assertThat(back.get("status").asText()).isEqualTo("active");
        assertThat(metric()).isEqualTo(1.0);
        assertThat(http.get("/ready").json().has("listeners_disconnected"))
                .as("gone from /ready once the connection is back")
                .isFalse();
    }

    /**
     * Dynamo's documented lifecycle (compatibility.md, HTTP API): a registration whose engine is not up yet is
     * {@code pending}, in {@code /workers} and in {@code dynamo_kvindexer_listeners}, until its first connection is
     * made, then {@code active}; the replica stays Ready meanwhile and lists it as not connected.
     */
    @Test
    void aWorkerIsPendingUntilItsEngineFirstConnects() throws Exception {
        IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
        resources.add(app);
        http = new HttpTestClient(app.baseUrl());
        resources.add(http);
        String endpoint = "tcp://127.0.0.1:" + freePort();
        http.post(
                        "/register",
                        "{\"instance_id\":7,\"endpoint\":\"" + endpoint + "\",\"model_name\":\"m\",\"block_size\":4}")
                .assertStatus(201);

        // an attempt was made and refused: the listener is past the ready gate, and still pending
        await().atMost(Duration.ofSeconds(30)).until(() -> listener().has("connect_error"));
        JsonNode worker = http.get("/workers").json().get(0);
        assertThat(worker.get("status").asText()).isEqualTo("pending");
        assertThat(worker.get("listeners").get("0").get("status").asText()).isEqualTo("pending");
        assertThat(http.metric("dynamo_kvindexer_listeners{status=\"pending\"}"))
                .isEqualTo(1.0);
        assertThat(http.metric("dynamo_kvindexer_listeners{status=\"active\"}")).isZero();
        HttpTestClient.Response ready = http.get("/ready");
        ready.assertStatus(200);
        assertThat(ready.json().get("listeners_not_connected")).hasSize(1);
        assertThat(ready.json().has("listeners_pending")).isFalse();

        resources.simulatorAt(endpoint, null); // the engine comes up
        await().atMost(Duration.ofSeconds(60))
                .until(() -> listener().path("connected").asBoolean());
        assertThat(listener().get("status").asText()).isEqualTo("active");
        assertThat(http.get("/workers").json().get(0).get("status").asText()).isEqualTo("active");
        assertThat(http.metric("dynamo_kvindexer_listeners{status=\"active\"}")).isEqualTo(1.0);
        assertThat(http.get("/ready").json().has("listeners_not_connected")).isFalse();
    }

    private JsonNode listener() {
        return http.get("/workers").json().get(0).get("listeners").get("0");
    }

    /** {@code dynamo_kvindexer_listeners_by_connection{connection="state"}}'s value. */
    private double connections(String state) {
        return http.metric("dynamo_kvindexer_listeners_by_connection{connection=\"" + state + "\"}");
    }

    private double metric() {
        return http.metric(DISCONNECTS);
    }

    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0)) {
            return probe.getLocalPort();
        }
    }
}
