package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A (model, tenant) whose last worker was unregistered while the replica recovered is dropped as it would have been
 * after the recovery: not kept, empty and with no worker, in {@code /stats} and {@code dynamo_kvindexer_models} for
 * the life of the process. An index that still holds blocks nobody registered (a Dynamo peer's) stays.
 */
class EmptiedIndexAfterRecoveryTest {

    private static void register(HttpTestClient http, long id, String model, EngineSimulator sim) {
        http.post(
                        "/register",
                        "{\"instance_id\":" + id + ",\"endpoint\":\"" + sim.endpoint() + "\",\"replay_endpoint\":\""
                                + sim.replayEndpoint() + "\",\"model_name\":\"" + model + "\",\"block_size\":4}")
                .assertStatus(201);
    }

    private static Set<String> indexes(HttpTestClient http) {
        Set<String> out = new TreeSet<>();
        for (JsonNode ix : http.get("/stats?workers=false").json().path("indexes")) {
            out.add(ix.get("model_name").asText());
        }
        return out;
    }

    @Test
    void theLastWorkerUnregisteredDuringRecoveryTakesItsIndex() throws Exception {
        try (EngineSimulator one = EngineSimulator.start(EngineSimulator.Options.defaults());
                EngineSimulator two = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peer = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient p = new HttpTestClient(peer.baseUrl())) {
            register(p, 1, "kept", one);
            register(p, 2, "solo", two);
            await().atMost(Duration.ofSeconds(30)).until(() -> one.subscriptions() >= 1 && two.subscriptions() >= 1);
            one.storeSequence(Replicas.TOKENS, 4).get(30, TimeUnit.SECONDS);
            two.storeSequence(Replicas.TOKENS, 4).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> indexes(p).equals(Set.of("kept", "solo")) && p.metric("dynamo_kvindexer_models") == 2);

            try (IndexerApp b = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                        c.peers = List.of(peer.baseUrl());
                        c.recoveryDelay = Duration.ofMillis(1500);
                    }));
                    HttpTestClient http = new HttpTestClient(b.baseUrl())) {
                http.post("/unregister", "{\"instance_id\":2,\"model_name\":\"solo\"}")
                        .assertStatus(200);
                assertThat(b.gate().isRecovering())
                        .as("it was still recovering")
                        .isTrue();
                Replicas.awaitReady(http);
                await().atMost(Duration.ofSeconds(30)).until(() -> indexes(http).equals(Set.of("kept")));
                assertThat(http.metric("dynamo_kvindexer_models")).isEqualTo(1.0);
                http.post("/query", "{\"model_name\":\"solo\",\"token_ids\":[1,2,3,4]}")
                        .assertStatus(404);
            }
        }
    }
}
