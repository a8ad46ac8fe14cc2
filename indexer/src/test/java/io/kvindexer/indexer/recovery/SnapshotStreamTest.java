package io.kvindexer.indexer.recovery;

import static io.kvindexer.indexer.recovery.Replicas.awaitReady;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.snapshot.Snapshotter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot streams into its file as the index is walked: it holds one step of the walk in memory, not the whole
 * cut (14 bytes a membership, a gigabyte at tens of millions), and the file it leaves restores every membership.
 */
class SnapshotStreamTest {

    private static final int CHAINS = 500;
    private static final int BLOCKS_PER_CHAIN = 200;

    @TempDir
    Path tmp;

    @Test
    void aSnapshotHoldsOneStepOfTheWalkInMemoryAndRestoresEveryMembership() throws Exception {
        Path dir = tmp.resolve("snapshots");
        Snapshotter.Written written;
        long memberships;
        try (IndexerApp source = IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
        }))) {
            ModelIndex ix = source.indexers().getOrCreate("m", "default", 4);
            for (int worker = 1; worker <= 2; worker++) {
                ix.submit(new WorkerKey(worker, 0), chains());
            }
            ix.flush().get(30, TimeUnit.SECONDS);
            memberships = ix.stats().memberships();
            assertThat(memberships).isEqualTo(2L * CHAINS * BLOCKS_PER_CHAIN);

            written = source.snapshots().write();
        }
        assertThat(Files.size(written.file())).isEqualTo(written.bytes());
        assertThat(written.bytes()).isGreaterThan(memberships * 4);
        assertThat(written.mostHeldBytes())
                .as("held in memory at once, of a %d-byte snapshot", written.bytes())
                .isPositive()
                .isLessThan(written.bytes() / 8);

        Path copy = Files.createDirectories(tmp.resolve("restored"));
        Files.copy(written.file(), copy.resolve(written.file().getFileName()));
        try (IndexerApp restored = IndexerApp.start(IndexerConfig.defaults().with(c -> c.snapshotDir = copy));
                HttpTestClient http = new HttpTestClient(restored.baseUrl())) {
            awaitReady(http);
            ModelIndex ix = restored.indexers().all().getFirst();
            assertThat(ix.stats().memberships()).as("every membership restored").isEqualTo(memberships);
            assertThat(http.metric("dynamo_kvindexer_snapshot_bytes{dir=\"" + copy + "\"}"))
                    .as("the newest snapshot's size from the start, before one is written")
                    .isEqualTo((double) written.bytes());
        }
    }

    /**
     * The size of the newest snapshot and the space left beside it are metrics: a volume must hold three (two kept,
     * one being written).
     */
    @Test
    void theNewestSnapshotsSizeAndTheSpaceLeftAreMetrics() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                    c.snapshotDir = dir;
                    c.snapshotInterval = Duration.ofMillis(100);
                }));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            ModelIndex ix = app.indexers().getOrCreate("m", "default", 4);
            ix.submit(new WorkerKey(1, 0), chains());
            ix.flush().get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                List<Path> files;
                try (var listing = Files.list(dir)) {
                    files = listing.filter(p -> p.getFileName().toString().startsWith("snapshot-"))
                            .sorted()
                            .toList();
                }
                assertThat(files).isNotEmpty();
                assertThat(http.metric("dynamo_kvindexer_snapshot_bytes{dir=\"" + dir + "\"}"))
                        .as("the newest snapshot's size")
                        .isEqualTo((double) Files.size(files.getLast()))
                        .isGreaterThan((double) CHAINS * BLOCKS_PER_CHAIN * 4);
            });
            assertThat(http.metric("dynamo_kvindexer_snapshot_dir_free_bytes{dir=\"" + dir + "\"}"))
                    .as("the space left beside it")
                    .isPositive()
                    .isLessThanOrEqualTo((double) Files.getFileStore(dir).getTotalSpace());
        }
    }

    /** {@link #CHAINS} unrelated chains of {@link #BLOCKS_PER_CHAIN} blocks, block size 4. */
    private static List<KvEvent> chains() {
        List<KvEvent> events = new ArrayList<>();
        for (int c = 0; c < CHAINS; c++) {
            long first = 1_000_000L * (c + 1);
            long[] hashes = new long[BLOCKS_PER_CHAIN];
            for (int b = 0; b < BLOCKS_PER_CHAIN; b++) {
                hashes[b] = first + b;
            }
            int tokens = c * BLOCKS_PER_CHAIN * 4;
            events.add(new BlockStored(
                    hashes,
                    false,
                    0,
                    IntStream.range(tokens, tokens + BLOCKS_PER_CHAIN * 4).toArray(),
                    4,
                    null,
                    StorageTier.DEVICE,
                    null,
                    false));
        }
        return events;
    }
}
