package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica restarts from its snapshot while its engine is registered anew during recovery under another model (the
 * operator renamed it) or another block size: the snapshot's registration does not come back, so neither do its
 * blocks under the old (model, tenant), which no listener would ever correct again; and the new registration does not
 * take the old one's sequence watermark, which belongs to a tree it does not have, so it learns the engine's history
 * by replay instead of skipping it. The same goes for an engine registered anew at another endpoint: another
 * process, which holds none of the old one's blocks.
 */
class RestoredRegistrationChangedTest {

    @TempDir
    Path tmp;

    private static final int[] LATER = {101, 102, 103, 104, 105, 106, 107, 108};

    private static void register(HttpTestClient http, EngineSimulator sim, String model, int blockSize) {
        http.post(
                        "/register",
                        "{\"instance_id\":1,\"endpoint\":\"" + sim.endpoint() + "\",\"replay_endpoint\":\""
                                + sim.replayEndpoint() + "\",\"model_name\":\"" + model + "\",\"block_size\":"
                                + blockSize + "}")
                .assertStatus(201);
    }

    private static int score(HttpTestClient http, String model, int[] tokens) {
        StringBuilder ids = new StringBuilder();
        for (int t : tokens) {
            ids.append(ids.isEmpty() ? "" : ",").append(t);
        }
        return http.post("/query", "{\"model_name\":\"" + model + "\",\"token_ids\":[" + ids + "]}")
                .json()
                .at("/scores/1/0")
                .asInt(0);
    }

    /** Instance 1 of model m (4-token blocks) holds {@link Replicas#TOKENS}; the replica has written a snapshot. */
    private void snapshotWithInstanceOne(Path dir, EngineSimulator sim) throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                    c.snapshotDir = dir;
                    c.snapshotInterval = Duration.ofHours(1);
                }));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            Replicas.awaitReady(http);
            register(http, sim, "m", 4);
            await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1);
            sim.storeSequence(Replicas.TOKENS, 4).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).until(() -> score(http, "m", Replicas.TOKENS) == 8);
            app.snapshots().write();
        }
    }

    /** Restarts from {@code dir}; recovery waits on a peer that is not there, so a registration lands during it. */
    private static IndexerApp restarting(Path dir) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
            c.peers = List.of("http://127.0.0.1:1");
            c.recoveryDelay = Duration.ofMillis(1500);
        }));
    }

    @Test
    void anEngineRegisteredUnderAnotherModelDuringRecoveryKeepsNothingOfItsOldOne() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            snapshotWithInstanceOne(dir, sim);
            try (IndexerApp app = restarting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                register(http, sim, "other", 4);
                assertThat(app.gate().isRecovering())
                        .as("registered during recovery")
                        .isTrue();
                Replicas.awaitReady(http);
                assertThat(http.get("/workers").json().findValuesAsText("model_name"))
                        .containsExactly("other");
                // no listener of model m is left to correct these: they would be claimed for good
                assertThat(score(http, "m", Replicas.TOKENS)).isZero();
                // the engine's history under the new model comes by replay, with what it stores later
                await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 2);
                sim.storeSequence(LATER, 4).get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> score(http, "other", LATER) == 8 && score(http, "other", Replicas.TOKENS) == 8);
            }
        }
    }

    @Test
    void anEngineRegisteredAtAnotherEndpointDuringRecoveryGetsNoneOfTheOldBlocks() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator old = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            snapshotWithInstanceOne(dir, old);
        }
        // the engine's pod went, and came back at another address, empty
        try (EngineSimulator moved = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp app = restarting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                http.post(
                                "/register",
                                "{\"instance_id\":1,\"endpoint\":\"" + moved.endpoint()
                                        + "\",\"model_name\":\"m\",\"block_size\":4}")
                        .assertStatus(201);
                assertThat(app.gate().isRecovering())
                        .as("registered during recovery")
                        .isTrue();
                Replicas.awaitReady(http);
                assertThat(http.get("/workers").json().findValuesAsText("endpoint"))
                        .contains(moved.endpoint());
                // the engine at the old endpoint held these; the one at the new endpoint never stored them
                assertThat(score(http, "m", Replicas.TOKENS)).isZero();
            }
        }
    }

    @Test
    void anEngineRegisteredWithAnotherBlockSizeDuringRecoveryGetsNoneOfTheOldBlocks() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            snapshotWithInstanceOne(dir, sim);
            try (IndexerApp app = restarting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                register(http, sim, "m", 8);
                assertThat(app.gate().isRecovering())
                        .as("registered during recovery")
                        .isTrue();
                Replicas.awaitReady(http);
                // the snapshot's blocks were cut in 4 tokens: the 8-token index of m takes none of them
                assertThat(http.metric("dynamo_kvindexer_index_memberships{model=\"m\",tenant=\"default\"}"))
                        .isZero();
                assertThat(http.get("/workers")
                                .json()
                                .at("/0/listeners/0/exactness")
                                .asText())
                        .as("the old watermark is not taken over a tree the replica does not hold")
                        .isNotEqualTo("exact");
            }
        }
    }
}
