package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot streams into a temporary file while its cut is taken: a cut that fails halfway (a full disk, the
 * writers not catching up, an interrupt) leaves the snapshots as they were and no temporary file behind.
 */
class SnapshotFilesWriteTest {

    @TempDir
    Path dir;

    @Test
    void aCutThatFailsHalfwayLeavesTheSnapshotsAsTheyWere() throws Exception {
        SnapshotFiles files = new SnapshotFiles(dir);
        Path good = files.write(out -> out.write(new byte[] {1, 2, 3}));

        assertThatThrownBy(() -> files.write(out -> {
                    out.write(new byte[4096]);
                    throw new IOException("No space left on device");
                }))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("No space left");
        assertThatThrownBy(() -> files.write(out -> {
                    out.write(new byte[4096]);
                    throw new InterruptedException();
                }))
                .isInstanceOf(InterruptedException.class);

        assertThat(files.newestFirst()).containsExactly(good);
        assertThat(Files.readAllBytes(good)).containsExactly(1, 2, 3);
        try (Stream<Path> all = Files.list(dir)) {
            assertThat(all.map(p -> p.getFileName().toString()))
                    .as("no temporary file left")
                    .containsExactlyInAnyOrder(good.getFileName().toString(), SnapshotFiles.LOCK);
        }
        assertThat(files.write(out -> out.write(7)))
                .as("the next one is written as usual")
                .isNotEqualTo(good);
        files.unlock();
    }
}
