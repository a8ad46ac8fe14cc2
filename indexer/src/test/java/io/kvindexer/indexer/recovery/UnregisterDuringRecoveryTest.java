package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An {@code /unregister} that arrives while a replica recovers wins over what the recovery brings, whatever the order:
 * before the peer's dump is installed (the instance is not known yet), after a registration made during recovery,
 * and after the recovery (the plain case). Nothing of the instance is left: no registration, no block.
 */
class UnregisterDuringRecoveryTest {

    private static final Duration SLOW_RECOVERY = Duration.ofMillis(1500);

    private static void register(HttpTestClient http, long id, EngineSimulator sim) {
        http.post(
                        "/register",
                        "{\"instance_id\":" + id + ",\"endpoint\":\"" + sim.endpoint() + "\",\"replay_endpoint\":\""
                                + sim.replayEndpoint() + "\",\"model_name\":\"m\",\"block_size\":4}")
                .assertStatus(201);
    }

    private static Set<Long> dumpWorkers(HttpTestClient http) {
        Set<Long> out = new TreeSet<>();
        for (JsonNode ev : http.get("/dump").json().path("m:default").path("events")) {
            out.add(ev.get("worker_id").asLong());
        }
        return out;
    }

    private static Set<Long> registered(HttpTestClient http) {
        Set<Long> out = new TreeSet<>();
        http.get("/workers").json().forEach(w -> out.add(w.get("instance_id").asLong()));
        return out;
    }

    /** Starts a replica recovering from {@code peer} slowly; returns it once its first request was answered. */
    private static IndexerApp recovering(String peer) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.peers = java.util.List.of(peer);
            c.recoveryDelay = SLOW_RECOVERY;
        }));
    }

    @Test
    void anUnregisterDuringRecoveryWinsWhateverTheOrder() throws Exception {
        try (EngineSimulator one = EngineSimulator.start(EngineSimulator.Options.defaults());
                EngineSimulator two = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peer = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient p = new HttpTestClient(peer.baseUrl())) {
            register(p, 1, one);
            register(p, 2, two);
            await().atMost(Duration.ofSeconds(30)).until(() -> one.subscriptions() >= 1 && two.subscriptions() >= 1);
            one.storeSequence(Replicas.TOKENS, 4).get(30, TimeUnit.SECONDS);
            two.storeSequence(Replicas.TOKENS, 4).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).until(() -> dumpWorkers(p).equals(Set.of(1L, 2L)));

            // 1. before the dump is installed: the instance is not known yet, the unregister is still taken
            try (IndexerApp b = recovering(peer.baseUrl());
                    HttpTestClient http = new HttpTestClient(b.baseUrl())) {
                http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}")
                        .assertStatus(200);
                assertThat(http.get("/ready").json().path("reason").asText())
                        .as("it was still recovering")
                        .isEqualTo(StartupGate.RECOVERING);
                Replicas.awaitReady(http);
                assertThat(registered(http)).containsExactly(2L);
                assertThat(dumpWorkers(http)).containsExactly(2L);
            }

            // 2. registered anew during recovery, then unregistered (one rank, with tenant), still recovering
            try (IndexerApp c = recovering(peer.baseUrl());
                    HttpTestClient http = new HttpTestClient(c.baseUrl())) {
                register(http, 1, one);
                http.post(
                                "/unregister",
                                "{\"instance_id\":1,\"model_name\":\"m\",\"tenant_id\":\"default\",\"dp_rank\":0}")
                        .assertStatus(200);
                assertThat(c.gate().isRecovering()).isTrue();
                Replicas.awaitReady(http);
                assertThat(registered(http)).containsExactly(2L);
                assertThat(dumpWorkers(http)).containsExactly(2L);
            }

            // 3. after the recovery: the plain case
            try (IndexerApp d = recovering(peer.baseUrl());
                    HttpTestClient http = new HttpTestClient(d.baseUrl())) {
                Replicas.awaitReady(http);
                assertThat(registered(http)).containsExactly(1L, 2L);
                http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}")
                        .assertStatus(200);
                assertThat(registered(http)).containsExactly(2L);
                assertThat(dumpWorkers(http)).containsExactly(2L);
            }
        }
    }
}
