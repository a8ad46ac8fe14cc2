package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerProcess;
import io.kvindexer.indexer.http.HttpTestClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The last snapshot at shutdown that cannot be written says so as the last one: no "trying again" from a process
 * that is stopping, and where a restart starts from.
 */
class ShutdownSnapshotLogTest {

    @TempDir
    Path tmp;

    @Test
    void aFailedLastSnapshotDoesNotPromiseAnotherTry() throws Exception {
        Path dir = Files.writeString(tmp.resolve("a-file"), "x").resolve("snapshots"); // cannot be created
        try (IndexerProcess replica = IndexerProcess.snapshotting(dir);
                HttpTestClient http = new HttpTestClient(replica.url())) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> http.get("/ready").status() == 200);
            assertThat(replica.terminate()).isTrue();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> replica.output().contains("the last snapshot, at shutdown, into " + dir + " failed"));
            assertThat(replica.output())
                    .contains("a restart starts from the newest of them")
                    .doesNotContain("trying again");
        }
    }
}
