package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The snapshot a replica started from was read through by its recovery: the pruning after its first snapshot keeps
 * it without reading it a second time (seconds of disk and CPU on a big one). Seen from outside: the file, changed
 * on disk after the load, is still there after the write; a second read would have found it damaged and deleted it.
 */
class LoadedSnapshotPruneTest {

    private static final String QUERY = "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8]}";

    @TempDir
    Path tmp;

    @Test
    void theSnapshotLoadedAtStartIsNotReadAgainByThePruning() throws Exception {
        Path dir = tmp.resolve("snapshots");
        IndexerConfig config = IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
        });
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp before = IndexerApp.start(config);
                    HttpTestClient http = new HttpTestClient(before.baseUrl())) {
                awaitReady(http);
                http.post(
                                "/register",
                                "{\"instance_id\":1,\"endpoint\":\"" + engine.endpoint()
                                        + "\",\"model_name\":\"m\",\"block_size\":4}")
                        .assertStatus(201);
                await().atMost(Duration.ofSeconds(30)).until(() -> engine.subscriptions() >= 1);
                engine.storeSequence(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4).get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30)).until(() -> score(http) == 8);
            } // its shutdown snapshot
            List<Path> written = new SnapshotFiles(dir).newestFirst();
            Path loaded = written.getFirst();
            try (IndexerApp app = IndexerApp.start(config);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                awaitReady(http);
                assertThat(score(http)).as("started from the snapshot").isEqualTo(8);
                Files.write(loaded, new byte[] {1, 2, 3}); // what a second read would find
                Path next = app.snapshots().write().file();
                assertThat(new SnapshotFiles(dir).newestFirst())
                        .as("the loaded snapshot kept unread beside the new one")
                        .containsExactly(next, loaded);
            }
        }
    }

    private static void awaitReady(HttpTestClient http) {
        await().atMost(Duration.ofSeconds(60)).until(() -> http.get("/ready").status() == 200);
    }

    private static int score(HttpTestClient http) {
        return http.post("/query", QUERY).json().at("/scores/1/0").asInt();
    }
}
