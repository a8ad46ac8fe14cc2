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
 * A snapshot carries last-store times (version 3) only when some tier has a TTL: without one it stays version 2, which
 * the versions before store times read, so a rollback keeps its snapshots.
 */
class SnapshotVersionTest {

    @TempDir
    Path tmp;

    @Test
    void version3OnlyWithABlockTtl() throws Exception {
        assertThat(snapshotVersion(ExpiryPolicy.NONE, "plain")).isEqualTo(BinaryDump.VERSION_WITH_REGISTRATIONS);
        assertThat(snapshotVersion(new ExpiryPolicy(Map.of(StorageTier.DEVICE, Duration.ofMinutes(5)), 0), "ttl"))
                .isEqualTo(BinaryDump.VERSION_WITH_STORE_TIMES);
    }

    /** The version field of the snapshot a replica with {@code expiry} writes (after the 8-byte magic). */
    private int snapshotVersion(ExpiryPolicy expiry, String name) throws Exception {
        Path dir = tmp.resolve(name);
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
            c.expiry = expiry;
        }))) {
            Path file = app.snapshots().write().file();
            try (InputStream in = Files.newInputStream(file)) {
                return Short.toUnsignedInt(
                        ByteBuffer.wrap(in.readNBytes(10), 8, 2).getShort());
            }
        }
    }
}
