package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

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
 * A registration without a replay endpoint, restored from a snapshot: what its engine published while the replica was
 * down cannot be asked for. It was `exact` at once, claiming the snapshot's blocks as all the engine held although the
 * engine had stored more (or removed some) meanwhile; it is now `replaying` until the engine's next batch shows whether
 * any were missed, as after a reconnect.
 */
class NoReplayEndpointRestartTest {

    @TempDir
    Path tmp;

    private static IndexerApp replica(Path dir) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
        }));
    }

    private static String exactness(HttpTestClient http) {
        return http.get("/workers").json().at("/0/listeners/0/exactness").asText();
    }

    @Test
    void aRestoredListenerWithoutReplayIsNotExactUntilTheEnginesNextBatch() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp app = replica(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                Replicas.awaitReady(http);
                http.post(
                                "/register",
                                "{\"instance_id\":1,\"endpoint\":\"" + sim.endpoint()
                                        + "\",\"model_name\":\"m\",\"block_size\":4}")
                        .assertStatus(201);
                await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1);
                sim.storeSequence(Replicas.TOKENS, 4).get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> http.get("/workers")
                                        .json()
                                        .at("/0/listeners/0/last_seq")
                                        .asInt(-1)
                                == 0);
                app.snapshots().write();
            }
            // seq 1, published while no replica listened
            sim.storeSequence(new int[] {201, 202, 203, 204}, 4).get(30, TimeUnit.SECONDS);
            try (IndexerApp app = replica(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                Replicas.awaitReady(http);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> http.get("/workers")
                                .json()
                                .at("/0/status")
                                .asText()
                                .equals("active"));
                assertThat(exactness(http)).isEqualTo("replaying");
                assertThat(http.get("/workers")
                                .json()
                                .at("/0/listeners/0/exactness_reason")
                                .asText())
                        .contains("no replay endpoint");
                // the next batch, seq 2, shows seq 1 missed
                sim.storeSequence(new int[] {301, 302, 303, 304}, 4).get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> exactness(http).equals("degraded"));
            }
        }
    }
}
