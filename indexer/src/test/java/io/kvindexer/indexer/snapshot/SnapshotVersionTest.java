package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.expiry.ExpiryPolicy;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot is version 4 (each registration with the batch at its watermark, so that the first replay after a
 * restart can tell an engine that restarted meanwhile), with or without a TTL; the last-store times go in only when
 * some tier has one. The versions before 4 read none of them (docs/operations.md: a rollback starts from a peer).
 * With {@code --mix-cache-salt} it is version 5, which carries the salts of salted blocks.
 */
class SnapshotVersionTest {

    @TempDir
    Path tmp;

    @Test
    void version4WithOrWithoutABlockTtl() throws Exception {
        assertThat(snapshotVersion(ExpiryPolicy.NONE, "plain")).isEqualTo(BinaryDump.VERSION_WITH_WATERMARK_BATCHES);
        assertThat(snapshotVersion(new ExpiryPolicy(Map.of(StorageTier.DEVICE, Duration.ofMinutes(5)), 0), "ttl"))
                .isEqualTo(BinaryDump.VERSION_WITH_WATERMARK_BATCHES);
    }

    @Test
    void version5WithMixedCacheSaltsOnly() throws Exception {
        assertThat(snapshotVersion(ExpiryPolicy.NONE, true, "salts")).isEqualTo(BinaryDump.VERSION_WITH_CACHE_SALTS);
    }

    private int snapshotVersion(ExpiryPolicy expiry, String name) throws Exception {
        return snapshotVersion(expiry, false, name);
    }

    /**
     * The version field of the snapshot a replica with {@code expiry} and {@code --mix-cache-salt} when {@code
     * mixCacheSalt} writes (after the 8-byte magic).
     */
    private int snapshotVersion(ExpiryPolicy expiry, boolean mixCacheSalt, String name) throws Exception {
        Path dir = tmp.resolve(name);
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
            c.expiry = expiry;
            c.mixCacheSalt = mixCacheSalt;
        }))) {
            Path file = app.snapshots().write().file();
            try (InputStream in = Files.newInputStream(file)) {
                return Short.toUnsignedInt(
                        ByteBuffer.wrap(in.readNBytes(10), 8, 2).getShort());
            }
        }
    }
}
