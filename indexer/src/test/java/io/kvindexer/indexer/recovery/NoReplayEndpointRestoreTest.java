package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A registration without a replay endpoint, restored from this replica's own snapshot: nobody listened to its engine
 * since the snapshot was written, and what the engine published meanwhile cannot be asked for. It was {@code exact}
 * at once, claiming the snapshot's blocks for as long as the engine stayed idle; it is now {@code replaying} until
 * the engine's next batch shows whether its seq continues. One recovered from a peer's dump, whose watermark meets
 * the live stream, stays exact at once (holding it too showed every idle worker {@code Degraded} after a rollout).
 */
class NoReplayEndpointRestoreTest {

    @TempDir
    Path tmp;

    private static IndexerApp snapshotting(Path dir) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
        }));
    }

    private static JsonNode listener(HttpTestClient http) {
        return http.get("/workers").json().at("/0/listeners/0");
    }

    /** Instance 1 on {@code http} without a replay endpoint, its first batch (seq 0) applied. */
    private static void seeded(HttpTestClient http, EngineSimulator sim) throws Exception {
        Replicas.awaitReady(http);
        Replicas.seed(http, sim);
        assertThat(listener(http).path("exactness").asText()).isEqualTo("exact");
    }

    /** Restored and listening again: the engine's second subscription is this replica's. */
    private static void listeningAgain(HttpTestClient http, EngineSimulator sim) {
        Replicas.awaitReady(http);
        await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 2);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> listener(http).path("status").asText().equals("active"));
        assertThat(Replicas.score(http)).as("the snapshot's blocks are back").isEqualTo(8);
    }

    private static void storeMore(EngineSimulator sim, int first) throws Exception {
        sim.storeSequence(new int[] {first, first + 1, first + 2, first + 3}, 4).get(30, TimeUnit.SECONDS);
    }

    @Test
    void restoredFromItsOwnSnapshotItIsNotExactUntilABatchContinuesTheSeq() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp app = snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                seeded(http, sim);
            } // (the shutdown writes the last snapshot)
            try (IndexerApp app = snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                listeningAgain(http, sim);
                // the engine is idle: nothing shows whether it published while the replica was down
                JsonNode idle = listener(http);
                assertThat(idle.path("exactness").asText()).isEqualTo("replaying");
                assertThat(idle.path("exactness_reason").asText()).contains("snapshot", "next batch");
                assertThat(http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8]}")
                                .json()
                                .at("/instances/1/exact")
                                .asBoolean(true))
                        .as("a query answer does not call the instance exact")
                        .isFalse();
                storeMore(sim, 101); // seq 1, right after the snapshot's seq 0: nothing was missed
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> listener(http).path("exactness").asText().equals("exact"));
                assertThat(listener(http).path("last_seq").asInt()).isEqualTo(1);
            }
        }
    }

    @Test
    void restoredFromItsOwnSnapshotItTurnsDegradedWhenTheNextBatchShowsAGap() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp app = snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                seeded(http, sim);
            }
            storeMore(sim, 201); // seq 1, published while no replica listened
            try (IndexerApp app = snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                listeningAgain(http, sim);
                assertThat(listener(http).path("exactness").asText()).isEqualTo("replaying");
                storeMore(sim, 301); // seq 2 shows seq 1 missed
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> listener(http).path("exactness").asText().equals("degraded"));
            }
        }
    }

    @Test
    void recoveredFromAPeersDumpItIsExactAtOnce() throws Exception {
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peerApp = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient peer = new HttpTestClient(peerApp.baseUrl())) {
            seeded(peer, sim);
            try (IndexerApp replica =
                            IndexerApp.start(Replicas.recoveringFrom(Duration.ofMillis(100), peerApp.baseUrl()));
                    HttpTestClient http = new HttpTestClient(replica.baseUrl())) {
                listeningAgain(http, sim);
                assertThat(listener(http).path("last_seq").asInt()).isZero();
                // the peer listened all along: its watermark meets the live stream, though the engine is idle
                assertThat(listener(http).path("exactness").asText()).isEqualTo("exact");
            }
        }
    }
}
