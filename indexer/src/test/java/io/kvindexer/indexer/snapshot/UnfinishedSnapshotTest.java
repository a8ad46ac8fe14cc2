package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.IndexerProcess;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.index.ModelIndex;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A crash mid-write leaves a temporary file beside the good snapshots: the restarted replica starts from the newest
 * good one, says in its log that it passed over the unfinished one, and deletes it with its next snapshot.
 */
class UnfinishedSnapshotTest {

    @TempDir
    Path tmp;

    @Test
    void anUnfinishedWriteIsNamedInTheLogAndPassedOver() throws Exception {
        Path dir = tmp.resolve("snapshots");
        Path good;
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
        }))) {
            ModelIndex ix = app.indexers().getOrCreate("m", "default", 4);
            ix.submit(
                    new WorkerKey(1, 0),
                    List.of(new BlockStored(
                            LongStream.rangeClosed(1, 200).toArray(),
                            false,
                            0,
                            IntStream.range(0, 800).toArray(),
                            4,
                            null,
                            StorageTier.DEVICE,
                            null,
                            false)));
            ix.flush().get(30, TimeUnit.SECONDS);
            good = app.snapshots().write().file();
        }
        byte[] bytes = Files.readAllBytes(good);
        Path unfinished = dir.resolve(".snapshot-0000000000000000003.kvix.tmp");
        Files.write(unfinished, Arrays.copyOf(bytes, bytes.length / 2));

        try (IndexerProcess replica = IndexerProcess.snapshotting(dir);
                HttpTestClient http = new HttpTestClient(replica.url())) {
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> http.get("/ready").status() == 200);
            assertThat(replica.output())
                    .contains(unfinished + " is an unfinished snapshot (" + bytes.length / 2 + " bytes;")
                    // a good one, whichever is newest: the write's, or the one at shutdown when that came in time
                    .containsPattern("snapshot .*snapshot-\\d{19}\\.kvix loaded");
            assertThat(http.metric("dynamo_kvindexer_index_memberships{model=\"m\",tenant=\"default\"}"))
                    .isEqualTo(200.0);
            assertThat(replica.terminate()).isTrue(); // its last snapshot deletes the leftover
        }
        assertThat(unfinished).doesNotExist();
    }
}
