package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * When the newest snapshot was written is a metric, beside the interval, so that an alert can tell snapshots that
 * stopped (KvIndexerSnapshotsOverdue): from the start it is the newest file's time, or the start itself when there is
 * none, and each snapshot written moves it on.
 */
class SnapshotFreshnessTest {

    @TempDir
    Path tmp;

    @Test
    void withNoSnapshotYetTheLastSuccessIsTheStart() throws Exception {
        Path dir = tmp.resolve("empty");
        double before = Instant.now().toEpochMilli() / 1000.0;
        try (IndexerApp app = snapshotting(dir, Duration.ofHours(1));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            double after = Instant.now().toEpochMilli() / 1000.0;
            assertThat(http.metric(series("dynamo_kvindexer_snapshot_last_success_timestamp_seconds", dir)))
                    .as("not overdue before it had a chance to write one")
                    .isBetween(before - 1, after + 1);
            assertThat(http.metric(series("dynamo_kvindexer_snapshot_interval_seconds", dir)))
                    .isEqualTo(3600.0);
        }
    }

    @Test
    void theNewestFilesTimeFromTheStartThenEachSnapshotWritten() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (IndexerApp first = snapshotting(dir, Duration.ofHours(1))) {
            first.snapshots().write();
        }
        Path newest = new SnapshotFiles(dir).newestFirst().getFirst();
        Instant twoHoursAgo = Instant.ofEpochSecond(Instant.now().getEpochSecond() - 7200);
        Files.setLastModifiedTime(newest, FileTime.from(twoHoursAgo));

        try (IndexerApp app = snapshotting(dir, Duration.ofMillis(200));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            String last = series("dynamo_kvindexer_snapshot_last_success_timestamp_seconds", dir);
            double atStart = http.metric(last);
            assertThat(atStart)
                    .as("the newest snapshot's time, before one is written")
                    .satisfiesAnyOf(
                            t -> assertThat(t).isEqualTo(twoHoursAgo.getEpochSecond()),
                            // (the first interval's snapshot may already be written)
                            t -> assertThat(t).isGreaterThan(Instant.now().getEpochSecond() - 120));
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(http.metric(last))
                            .as("moved on by the snapshots written")
                            .isGreaterThan(Instant.now().getEpochSecond() - 60));
        }
    }

    private static IndexerApp snapshotting(Path dir, Duration interval) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = interval;
        }));
    }

    private static String series(String name, Path dir) {
        return name + "{dir=\"" + dir + "\"}";
    }
}
