package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.BinaryDumpWriter;
import io.kvindexer.indexer.dump.DumpJson;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.expiry.BlockExpiry;
import io.kvindexer.indexer.expiry.ExpiryPolicy;
import io.kvindexer.indexer.expiry.ExpiryReason;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Loading blocks' last-store times from a snapshot file: a block past its TTL by the file's time goes promptly and
 * is counted as expired; a time in the future (another replica's clock ahead) counts as now; a file written without
 * times (version 2, as replicas before version 3 wrote them) keeps the old behaviour, the time starts at the load.
 * The same for a JSON {@code /dump}'s {@code last_store_ms}, and for one without (a Dynamo peer's). The methods mostly
 * wait for a TTL or for sweeps, each with its own expiry and indexes, so they run two at once.
 */
class StoreTimesRecoveryTest {

    private static final WorkerKey W = new WorkerKey(1, 0);
    private static final long[] BLOCKS = {101, 102, 103};

    @TempDir
    Path tmp;

    /** One index "m" of three host-pinned blocks held by {@link #W}, with their times when {@code times} is not null. */
    private Path snapshot(String name, long[] times) throws Exception {
        Path file = tmp.resolve(name);
        try (OutputStream out = Files.newOutputStream(file);
                BinaryDumpWriter w = times == null
                        ? new BinaryDumpWriter(out, List.of())
                        : new BinaryDumpWriter(out, List.of(), true)) {
            w.beginIndex("m", "t", 4);
            for (int i = 0; i < BLOCKS.length; i++) {
                w.membership(W, StorageTier.HOST_PINNED, i > 0, i > 0 ? BLOCKS[i - 1] : 0, BLOCKS[i], BLOCKS[i] + 1);
            }
            if (times != null) {
                w.storeTimes(W, StorageTier.HOST_PINNED, BLOCKS, times);
            }
            w.endIndex();
        }
        return file;
    }

    /**
     * The same index as a JSON {@code /dump} document: each block a single-block Stored event, with its
     * {@code last_store_ms} when {@code times} is not null (ours with a TTL), without (a Dynamo peer's) when it is.
     */
    private static byte[] jsonDump(long[] times) throws Exception {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try (DumpJson.Writer w = DumpJson.writer(out)) {
            w.begin("m", "t", 4);
            for (int i = 0; i < BLOCKS.length; i++) {
                w.event(new RouterEvent(
                        W.instanceId(),
                        W.dpRank(),
                        StorageTier.HOST_PINNED,
                        i,
                        new RouterEvent.Stored(
                                i > 0,
                                i > 0 ? BLOCKS[i - 1] : 0,
                                new long[] {BLOCKS[i]},
                                new long[] {BLOCKS[i] + 1},
                                times == null ? null : new long[] {times[i]})));
            }
            w.end();
        }
        return out.toByteArray();
    }

    private static ModelIndex loadJson(byte[] json, Indexers indexers) throws Exception {
        DumpApplier.parse(new java.io.ByteArrayInputStream(json), indexers, "a JSON dump", 60_000)
                .install()
                .run();
        ModelIndex ix = indexers.get("m", "t").orElseThrow();
        ix.flush().get(30, TimeUnit.SECONDS);
        return ix;
    }

    private static ModelIndex load(Path file, Indexers indexers) throws Exception {
        try (InputStream in = Files.newInputStream(file)) {
            BinaryDumpApplier.stage(in, indexers, 60_000, file.toString())
                    .install()
                    .run();
        }
        ModelIndex ix = indexers.get("m", "t").orElseThrow();
        ix.flush().get(30, TimeUnit.SECONDS);
        return ix;
    }

    private static BlockExpiry expiry(Duration ttl) {
        return new BlockExpiry(new ExpiryPolicy(Map.of(StorageTier.HOST_PINNED, ttl), 0));
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void blocksPastTheirTtlByTheirStoreTimeExpireRightAfterTheLoadAndTheOthersStay() throws Exception {
        long now = System.currentTimeMillis();
        // two stored an hour ago, one just now; the TTL is ten minutes
        Path file = snapshot("v3.kvix", new long[] {now - 3_600_000, now - 3_500_000, now});
        try (BlockExpiry expiry = expiry(Duration.ofMinutes(10));
                Indexers indexers = new Indexers(IndexOptions.defaults(), expiry)) {
            ModelIndex ix = load(file, indexers);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> expiry.expired(StorageTier.HOST_PINNED, ExpiryReason.TTL) == 2);
            ix.flush().get(30, TimeUnit.SECONDS);
            assertThat(ix.stats().memberships()).isEqualTo(1);
            assertThat(expiry.followedBlocks()).isEqualTo(1);
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aStoreTimeInTheFutureCountsAsNow() throws Exception {
        long now = System.currentTimeMillis();
        Path file = snapshot("ahead.kvix", new long[] {now + 3_600_000, now + 3_600_000, now + 3_600_000});
        try (BlockExpiry expiry = expiry(Duration.ofSeconds(2));
                Indexers indexers = new Indexers(IndexOptions.defaults(), expiry)) {
            ModelIndex ix = load(file, indexers);
            // an hour ahead taken as it is would keep them an hour; clamped to now they go after the 2 s TTL
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> expiry.expired(StorageTier.HOST_PINNED, ExpiryReason.TTL) == 3);
            ix.flush().get(30, TimeUnit.SECONDS);
            assertThat(ix.stats().memberships()).isZero();
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aSnapshotWithoutTimesStartsEachBlocksTimeAtTheLoad() throws Exception {
        Path file = snapshot("v2.kvix", null);
        assertThat(Files.readAllBytes(file)[9])
                .as("version 2, as older replicas wrote")
                .isEqualTo((byte) 2);
        try (BlockExpiry expiry = expiry(Duration.ofMinutes(10));
                Indexers indexers = new Indexers(IndexOptions.defaults(), expiry)) {
            ModelIndex ix = load(file, indexers);
            assertThat(expiry.followedBlocks()).isEqualTo(3);
            // several sweeps later (a sweep every second at most) nothing went: their ten minutes started at the load
            Thread.sleep(2_500);
            ix.flush().get(30, TimeUnit.SECONDS);
            assertThat(expiry.expired(StorageTier.HOST_PINNED, ExpiryReason.TTL))
                    .isZero();
            assertThat(ix.stats().memberships()).isEqualTo(3);
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aJsonDumpsStoreTimesStartTheTtlsAsABinaryDumpsDo() throws Exception {
        long now = System.currentTimeMillis();
        byte[] json = jsonDump(new long[] {now - 3_600_000, now - 3_500_000, now});
        assertThat(new String(json, java.nio.charset.StandardCharsets.UTF_8)).contains("\"last_store_ms\":" + now);
        try (BlockExpiry expiry = expiry(Duration.ofMinutes(10));
                Indexers indexers = new Indexers(IndexOptions.defaults(), expiry)) {
            ModelIndex ix = loadJson(json, indexers);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> expiry.expired(StorageTier.HOST_PINNED, ExpiryReason.TTL) == 2);
            ix.flush().get(30, TimeUnit.SECONDS);
            assertThat(ix.stats().memberships()).isEqualTo(1);
            assertThat(expiry.followedBlocks()).isEqualTo(1);
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aJsonStoreTimeInTheFutureCountsAsNow() throws Exception {
        long ahead = System.currentTimeMillis() + 3_600_000;
        try (BlockExpiry expiry = expiry(Duration.ofSeconds(2));
                Indexers indexers = new Indexers(IndexOptions.defaults(), expiry)) {
            ModelIndex ix = loadJson(jsonDump(new long[] {ahead, ahead, ahead}), indexers);
            await().atMost(Duration.ofSeconds(20))
                    .until(() -> expiry.expired(StorageTier.HOST_PINNED, ExpiryReason.TTL) == 3);
            ix.flush().get(30, TimeUnit.SECONDS);
            assertThat(ix.stats().memberships()).isZero();
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aJsonDumpWithoutTimesAsADynamoPeerWritesStartsEachBlocksTimeAtTheLoad() throws Exception {
        byte[] json = jsonDump(null);
        assertThat(new String(json, java.nio.charset.StandardCharsets.UTF_8)).doesNotContain("last_store_ms");
        try (BlockExpiry expiry = expiry(Duration.ofMinutes(10));
                Indexers indexers = new Indexers(IndexOptions.defaults(), expiry)) {
            ModelIndex ix = loadJson(json, indexers);
            assertThat(expiry.followedBlocks()).isEqualTo(3);
            Thread.sleep(2_500);
            ix.flush().get(30, TimeUnit.SECONDS);
            assertThat(expiry.expired(StorageTier.HOST_PINNED, ExpiryReason.TTL))
                    .isZero();
            assertThat(ix.stats().memberships()).isEqualTo(3);
        }
    }

    /** The first bytes of the replica's binary {@code /dump} with {@code query}, and the status. */
    private static java.net.http.HttpResponse<byte[]> binaryDump(io.kvindexer.indexer.IndexerApp app, String query)
            throws Exception {
        try (java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient()) {
            return client.send(
                    java.net.http.HttpRequest.newBuilder(java.net.URI.create(app.baseUrl() + "/dump" + query))
                            .header("Accept", io.kvindexer.indexer.dump.BinaryDump.MEDIA_TYPE)
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofByteArray());
        }
    }

    /**
     * A replica that knows only version 2 asks with {@code ?registrations=true} and still gets version 2; the times
     * come only when asked for too, and a bad value is refused like one of {@code registrations}. A parameter this
     * version does not know (a newer reader's) is ignored.
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void theDumpVersionFollowsWhatTheReaderAskedFor() throws Exception {
        try (io.kvindexer.indexer.IndexerApp app =
                io.kvindexer.indexer.IndexerApp.start(io.kvindexer.indexer.IndexerConfig.defaults())) {
            assertThat(binaryDump(app, "").body()[9]).isEqualTo((byte) 1);
            assertThat(binaryDump(app, "?registrations=true").body()[9]).isEqualTo((byte) 2);
            assertThat(binaryDump(app, "?registrations=true&store_times=true").body()[9])
                    .isEqualTo((byte) 3);
            // a newer replica's parameter for a later version is ignored, not refused: mixed versions during a
            // rolling upgrade still recover from each other
            assertThat(binaryDump(app, "?registrations=true&store_times=true&a_later_version=true")
                            .body()[9])
                    .isEqualTo((byte) 3);
            assertThat(binaryDump(app, "?registrations=true&store_times=true&watermark_batches=true")
                            .body()[9])
                    .isEqualTo((byte) 4);
            assertThat(binaryDump(app, "?registrations=true&watermark_batches=true")
                            .body()[9])
                    .isEqualTo((byte) 4);
            assertThat(binaryDump(app, "?registrations=true&watermark_batches=true&cache_salts=true")
                            .body()[9])
                    .as("salts only from a replica that keeps them (--mix-cache-salt)")
                    .isEqualTo((byte) 4);
            assertThat(binaryDump(app, "?registrations=true&watermark_batches=true&snapshot_watermarks=true")
                            .body()[9])
                    .as("which watermarks are a snapshot's: only for a reader that asks (an older one refuses 6)")
                    .isEqualTo((byte) 6);
            assertThat(binaryDump(app, "?registrations=true&snapshot_watermarks=false")
                            .body()[9])
                    .isEqualTo((byte) 2);
            assertThat(binaryDump(app, "?snapshot_watermarks=true").body()[9])
                    .as("without the registrations there is nothing to mark")
                    .isEqualTo((byte) 1);
            assertThat(binaryDump(app, "?registrations=true&snapshot_watermarks=yes")
                            .statusCode())
                    .isEqualTo(400);
            assertThat(binaryDump(app, "?watermark_batches=true").body()[9])
                    .as("without the registrations there is nothing to carry them")
                    .isEqualTo((byte) 1);
            assertThat(binaryDump(app, "?registrations=true&cache_salts=yes").statusCode())
                    .isEqualTo(400);
            java.net.http.HttpResponse<byte[]> bad = binaryDump(app, "?registrations=true&store_times=yes");
            assertThat(bad.statusCode()).isEqualTo(400);
            assertThat(new String(bad.body(), java.nio.charset.StandardCharsets.UTF_8))
                    .contains("query parameter `store_times` must be true or false, got `yes`");
        }
    }
}
