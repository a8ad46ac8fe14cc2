package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file system that cannot lock (some NFS mounts, FUSE: {@code tryLock} throws) costs the one-replica-per-directory
 * check, not the snapshots: they are written as before.
 */
class SnapshotFilesLockTest {

    @TempDir
    Path dir;

    @Test
    void withoutLocksSnapshotsAreStillWritten() throws IOException, InterruptedException {
        SnapshotFiles files = new SnapshotFiles(dir, channel -> {
            throw new IOException("No locks available");
        });
        SnapshotFiles.Content content = out -> out.write(new byte[] {1, 2, 3});
        Path written = files.write(content);
        assertThat(Files.readAllBytes(written)).containsExactly(1, 2, 3);
        assertThat(files.write(content)).as("and the next one").isNotEqualTo(written);
        assertThat(files.newestFirst()).hasSize(2);
        files.unlock();
    }
}
