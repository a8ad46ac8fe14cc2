package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.IndexerProcess;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.snapshot.SnapshotFiles;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One replica per snapshot directory: two would number and prune the same files and overwrite each other's
 * snapshots, so the second stops at startup naming the first, whether it is another process or another replica
 * in this JVM, and the directory is free again once the first stops.
 */
class SnapshotDirLockTest {

    @TempDir
    Path dir;

    private IndexerConfig snapshotting() {
        return IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofMillis(200);
        });
    }

    @Test
    void aSecondReplicaOnTheSameDirectoryStopsAtStartupAndTheFirstWritesOn() throws Exception {
        try (IndexerProcess first = IndexerProcess.start(
                IndexerProcess.QUICK_START,
                "--port",
                "0",
                "--snapshot-dir",
                dir.toString(),
                "--snapshot-interval",
                "200ms")) {
            assertThat(Files.readString(dir.resolve(SnapshotFiles.LOCK)).strip())
                    .isEqualTo(Long.toString(first.pid()));

            Process second = IndexerProcess.command(
                            IndexerProcess.QUICK_START, "--port", "0", "--snapshot-dir", dir.toString())
                    .redirectErrorStream(true)
                    .start();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            second.getInputStream().transferTo(out);
            assertThat(second.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(second.exitValue()).isEqualTo(1);
            assertThat(out.toString(StandardCharsets.UTF_8))
                    .contains("--snapshot-dir " + dir + " is in use by another kv-indexer (process " + first.pid())
                    .doesNotContain("listening on");

            assertThatThrownBy(() -> IndexerApp.start(snapshotting()))
                    .hasMessageContaining("is in use by another kv-indexer");

            // the first one writes on, undisturbed
            try (HttpTestClient http = new HttpTestClient(first.url())) {
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> http.get("/metrics")
                                .body()
                                .contains("dynamo_kvindexer_snapshots_total{event=\"written\"}"));
            }
            assertThat(first.terminate()).isTrue();
        }
        // stopped, it let the directory go: the next replica starts there
        try (IndexerApp next = IndexerApp.start(snapshotting())) {
            assertThat(next.snapshots()).isNotNull();
            assertThatThrownBy(() -> IndexerApp.start(snapshotting()))
                    .as("a second replica in the same JVM")
                    .hasMessageContaining("is in use by another kv-indexer");
        }
        try (IndexerApp again = IndexerApp.start(snapshotting())) {
            assertThat(again.snapshots()).isNotNull();
            assertThat(Files.readString(dir.resolve(SnapshotFiles.LOCK)).strip())
                    .isEqualTo(Long.toString(ProcessHandle.current().pid()));
        }
    }
}
