package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica whose listener is {@code degraded} holds less of its worker than the engine does (the blocks were dropped
 * and only live events rebuild them). A replica that recovers from it, from its {@code /dump} or its snapshot, must
 * not take that partial state for a whole one: before, it resumed after the peer's watermark, found nothing missing
 * and called the worker {@code exact} while it lacked the blocks the peer had dropped (found by
 * {@code RandomFaultTest}, seed 2). Now a cut carries a degraded worker as a registration to join afresh: the
 * recovering replica asks the engine for its whole buffer, and is exact only when that reaches back to seq 0.
 */
class DegradedPeerRecoveryTest {

    @TempDir
    Path tmp;

    private static final int BLOCK = 4;

    private static String registration(EngineSimulator sim) {
        return "{\"instance_id\":1,\"endpoint\":\"" + sim.endpoint() + "\",\"replay_endpoint\":\""
                + sim.replayEndpoint() + "\",\"model_name\":\"m\",\"block_size\":" + BLOCK + "}";
    }

    private static void store(EngineSimulator sim, int first) throws Exception {
        int[] tokens = new int[BLOCK * 3];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = first + i;
        }
        sim.storeSequence(tokens, BLOCK).get(30, TimeUnit.SECONDS);
    }

    /** The device blocks {@code /dump} claims for instance 1. */
    private static Set<Long> claimed(HttpTestClient http) {
        Set<Long> out = new HashSet<>();
        http.get("/dump")
                .json()
                .properties()
                .forEach(model -> model.getValue().path("events").forEach(ev -> {
                    if (ev.get("worker_id").asLong() == 1) {
                        for (JsonNode b : ev.at("/event/data/stored/blocks")) {
                            out.add(b.get("block_hash").bigIntegerValue().longValue());
                        }
                    }
                }));
        return out;
    }

    private static String exactness(HttpTestClient http) {
        return http.get("/workers").json().path(0).at("/listeners/0/exactness").asText("none");
    }

    /** The peer: instance 1 registered, unregistered and registered again (degraded), the engine holding more. */
    private static void degradeOn(HttpTestClient peer, EngineSimulator sim) throws Exception {
        Replicas.awaitReady(peer);
        peer.post("/register", registration(sim)).assertStatus(201);
        await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1);
        store(sim, 100);
        store(sim, 200);
        Set<Long> first = sim.held(0, StorageTier.DEVICE);
        await().atMost(Duration.ofSeconds(30)).until(() -> claimed(peer).equals(first));
        peer.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}").assertStatus(200);
        peer.post("/register", registration(sim)).assertStatus(201);
        await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 2);
        store(sim, 300);
        await().atMost(Duration.ofSeconds(30)).until(() -> exactness(peer).equals("degraded"));
        // the peer itself: only what it can vouch for (the blocks of the first batches are gone)
        await().atMost(Duration.ofSeconds(30)).until(() -> claimed(peer).size() == 3);
        assertThat(sim.held(0, StorageTier.DEVICE)).hasSize(9);
    }

    /** The recovering replica, once it has settled: exact and whole, or degraded and no more than the engine's. */
    private static void assertVouchedFor(HttpTestClient http, EngineSimulator sim) {
        Set<Long> held = sim.held(0, StorageTier.DEVICE);
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .until(() ->
                        !exactness(http).equals("replaying") && !exactness(http).equals("none"));
        // give a listener that claims to be exact time to prove it
        await().atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> {
                    String state = exactness(http);
                    Set<Long> claimed = claimed(http);
                    assertThat(held).containsAll(claimed);
                    if (state.equals("exact")) {
                        assertThat(claimed)
                                .as("claims of a worker reported exact")
                                .isEqualTo(held);
                    }
                });
    }

    @Test
    void aReplicaRecoveringFromADegradedPeerIsNotExactWithThePeersPartialBlocks() throws Exception {
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peerApp = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient peer = new HttpTestClient(peerApp.baseUrl())) {
            degradeOn(peer, sim);
            try (IndexerApp replica = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                        c.peers = List.of(peerApp.baseUrl());
                        c.recoveryDelay = Duration.ofMillis(100);
                    }));
                    HttpTestClient http = new HttpTestClient(replica.baseUrl())) {
                Replicas.awaitReady(http);
                assertVouchedFor(http, sim);
                // the engine's buffer reaches back to seq 0: the recovering replica got everything from it
                assertThat(exactness(http)).isEqualTo("exact");
                assertThat(claimed(http)).isEqualTo(sim.held(0, StorageTier.DEVICE));
            }
        }
    }

    @Test
    void aReplicaRestoredFromASnapshotTakenWhileDegradedIsNotExactWithItsPartialBlocks() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                        c.snapshotDir = dir;
                        c.snapshotInterval = Duration.ofHours(1);
                    }));
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                degradeOn(http, sim);
            } // (the shutdown writes the last snapshot)
            try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                        c.snapshotDir = dir;
                        c.snapshotInterval = Duration.ofHours(1);
                    }));
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                Replicas.awaitReady(http);
                assertVouchedFor(http, sim);
                assertThat(exactness(http)).isEqualTo("exact");
                assertThat(claimed(http)).isEqualTo(sim.held(0, StorageTier.DEVICE));
            }
        }
    }
}
