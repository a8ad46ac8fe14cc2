package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerProcess;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A registration change reaches the snapshot directory soon, not a {@code --snapshot-interval} later: a replica
 * SIGKILLed after an answered {@code /register} comes back subscribed to the engine (and replays what it missed), and
 * one killed after an {@code /unregister} does not bring the instance and its blocks back.
 */
class RegistrationDurabilityTest {

    private static final int[] TOKENS = {1, 2, 3, 4, 5, 6, 7, 8};
    private static final String QUERY = "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8]}";

    @TempDir
    Path tmp;

    private static int score(HttpTestClient http) {
        return http.post("/query", QUERY).json().at("/scores/1/0").asInt(0);
    }

    /** The newest snapshot's number, 0 when there is none. */
    private static long newest(Path dir) throws Exception {
        List<Path> files = new SnapshotFiles(dir).newestFirst();
        String name = files.isEmpty()
                ? "snapshot-0.kvix"
                : files.getFirst().getFileName().toString();
        return Long.parseLong(name.substring("snapshot-".length(), name.length() - ".kvix".length()));
    }

    private static void awaitReady(HttpTestClient http) {
        await().atMost(Duration.ofSeconds(60)).until(() -> http.get("/ready").status() == 200);
    }

    @Test
    void aReplicaKilledRightAfterARegistrationChangeComesBackWithIt() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerProcess first = IndexerProcess.snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(first.url())) {
                awaitReady(http);
                http.registerEngine(sim);
                await().atMost(Duration.ofSeconds(30)).until(() -> newest(dir) >= 1);
                // stored after the snapshot: the restarted replica asks the engine for it
                sim.storeSequence(TOKENS, 4).get(30, TimeUnit.SECONDS);
                await().atMost(Duration.ofSeconds(30)).until(() -> score(http) == 8);
                assertThat(first.kill()).isTrue();
            }
            long afterRegister;
            try (IndexerProcess second = IndexerProcess.snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(second.url())) {
                awaitReady(http);
                assertThat(http.get("/workers").json().findValuesAsText("instance_id"))
                        .containsExactly("1");
                await().atMost(Duration.ofSeconds(30)).until(() -> score(http) == 8);
                afterRegister = newest(dir);
                http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}")
                        .assertStatus(200);
                await().atMost(Duration.ofSeconds(30)).until(() -> newest(dir) > afterRegister);
                assertThat(second.kill()).isTrue();
            }
            try (IndexerProcess third = IndexerProcess.snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(third.url())) {
                awaitReady(http);
                assertThat(http.get("/workers").json()).isEmpty();
                assertThat(score(http)).isZero();
            }
        }
    }
}
