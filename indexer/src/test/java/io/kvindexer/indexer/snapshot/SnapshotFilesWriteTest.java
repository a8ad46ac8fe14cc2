package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.BinaryDumpWriter;
import io.kvindexer.indexer.testkit.LogCapture;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot streams into a temporary file while its cut is taken: a cut that fails halfway (a full disk, the
 * writers not catching up, an interrupt) leaves the snapshots as they were and no temporary file behind. Pruning
 * keeps the newest snapshots that read back, never a damaged one in place of a good one.
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

    @Test
    void aDamagedNewestSnapshotGoesBeforeAnOlderGoodOne() throws Exception {
        byte[] good = aSnapshot();
        Path older = dir.resolve("snapshot-0000000000000000001.kvix");
        Path damaged = dir.resolve("snapshot-0000000000000000002.kvix");
        Files.write(older, good);
        Files.write(damaged, Arrays.copyOf(good, good.length - 5)); // cut short, as by a disk that filled up
        SnapshotFiles files = new SnapshotFiles(dir);

        Path third = files.write(out -> out.write(good));

        assertThat(files.newestFirst())
                .as("the good older one is kept, the damaged newer one is gone")
                .containsExactly(third, older);
        assertThat(Files.readAllBytes(older)).isEqualTo(good);
        Path fourth = files.write(out -> out.write(good));
        assertThat(files.newestFirst()).containsExactly(fourth, third);
        files.unlock();
    }

    @Test
    void anUnreadableSnapshotCountsAsDamaged() throws Exception {
        byte[] good = aSnapshot();
        Path older = dir.resolve("snapshot-0000000000000000001.kvix");
        Path flipped = dir.resolve("snapshot-0000000000000000002.kvix");
        Files.write(older, good);
        byte[] bad = good.clone();
        bad[bad.length / 2] ^= 0x10; // one flipped bit: a checksum fails
        Files.write(flipped, bad);
        SnapshotFiles files = new SnapshotFiles(dir);

        Path third = files.write(out -> out.write(good));

        assertThat(files.newestFirst()).containsExactly(third, older);
        files.unlock();
    }

    @Test
    void aGraceFileLeftWithoutItsSnapshotIsNotTakenForTheNextOnes() throws Exception {
        byte[] good = aSnapshot();
        Path older = dir.resolve("snapshot-0000000000000000001.kvix");
        Files.write(older, good);
        // a crash after the grace file of snapshot 2 was renamed into place, before snapshot 2 was
        Path crashed = Files.write(dir.resolve("snapshot-0000000000000000002.grace"), new byte[] {9, 9, 9});
        SnapshotFiles files = new SnapshotFiles(dir);

        Path second = files.write(out -> out.write(good), out -> {}); // no worker detached now

        assertThat(second.getFileName().toString())
                .as("numbered past the crashed write")
                .isEqualTo("snapshot-0000000000000000003.kvix");
        assertThat(SnapshotFiles.graceOf(second)).as("not the crashed write's").doesNotExist();
        assertThat(crashed).as("pruned: its snapshot never came").doesNotExist();
        Path third = files.write(out -> out.write(good), out -> out.write(new byte[] {1, 2}));
        assertThat(SnapshotFiles.graceOf(third)).exists();
        files.unlock();
    }

    /**
     * A directory named like a snapshot (an operator's copy, say) cannot be pruned: it is named in a warning once and
     * left alone, the snapshots around it are pruned as usual, and each write still succeeds. Before, the pruning
     * threw on it after every write, so each snapshot written counted as failed and the older ones piled up.
     */
    @Test
    void aDirectoryNamedLikeASnapshotIsLeftAloneAndWritesGoOn() throws Exception {
        byte[] good = aSnapshot();
        Path oldest = Files.write(dir.resolve("snapshot-0000000000000000001.kvix"), good);
        Path older = Files.write(dir.resolve("snapshot-0000000000000000002.kvix"), good);
        Path stray = Files.createDirectories(dir.resolve("snapshot-0000000000000000003.kvix"));
        Files.writeString(stray.resolve("keep"), "an operator's copy");
        SnapshotFiles files = new SnapshotFiles(dir);
        try (LogCapture log = LogCapture.warningsOf(SnapshotFiles.class)) {
            Path fourth = files.write(out -> out.write(good));
            Path fifth = files.write(out -> out.write(good));
            Path sixth = files.write(out -> out.write(good));

            assertThat(files.newestFirst()).containsExactly(sixth, fifth, stray);
            assertThat(fourth).doesNotExist();
            assertThat(oldest).doesNotExist();
            assertThat(older).doesNotExist();
            assertThat(log.warnings())
                    .filteredOn(w -> w.contains("cannot delete"))
                    .singleElement()
                    .asString()
                    .contains(stray.toString(), "a directory that is not empty", "remove it by hand");
        }
        files.unlock();
    }

    /**
     * A leftover at the next write's paths that can be neither overwritten nor deleted (a directory named like its
     * temporary file) is numbered past: the writes go on. Before, every write tried the same temporary path and
     * failed, for as long as the replica ran.
     */
    @Test
    void aDirectoryAtTheNextTemporaryPathDoesNotStopTheWrites() throws Exception {
        byte[] good = aSnapshot();
        Path older = Files.write(dir.resolve("snapshot-0000000000000000001.kvix"), good);
        Path stray = Files.createDirectories(dir.resolve(".snapshot-0000000000000000002.kvix.tmp"));
        Files.writeString(stray.resolve("x"), "in the way");
        SnapshotFiles files = new SnapshotFiles(dir);
        try (LogCapture log = LogCapture.warningsOf(SnapshotFiles.class)) {
            Path second = files.write(out -> out.write(good));
            Path third = files.write(out -> out.write(good));

            assertThat(files.newestFirst()).containsExactly(third, second);
            assertThat(older).doesNotExist();
            assertThat(stray).as("left alone").isDirectory();
            assertThat(log.warnings())
                    .as("named once, not at every write")
                    .singleElement()
                    .asString()
                    .contains("cannot delete " + stray);
        }
        files.unlock();
    }

    /**
     * A file named with the largest number (not one a replica writes: it would take 2^63 snapshots) left no number
     * past it: the next write overflowed to {@code snapshot--9223372036854775808.kvix}, a name nothing loads or prunes,
     * so a restart did not start from it. It is now not taken for a snapshot, and writes go on from the replica's own.
     */
    @Test
    void aFileWithTheLargestNumberDoesNotTakeTheNextWritesOutOfReach() throws Exception {
        byte[] good = aSnapshot();
        Path foreign = Files.write(dir.resolve("snapshot-9223372036854775807.kvix"), good);
        SnapshotFiles files = new SnapshotFiles(dir);
        Path first = files.write(out -> out.write(good));
        Path second = files.write(out -> out.write(good));

        assertThat(first.getFileName()).hasToString("snapshot-0000000000000000001.kvix");
        assertThat(files.newestFirst()).as("what a restart loads").containsExactly(second, first);
        assertThat(foreign).as("left alone").exists();
        files.unlock();
    }

    /**
     * After a rollback, the snapshots of the newer version are the state that version left: they are not pruned as
     * damaged (before, the first snapshot the older version wrote deleted them, so rolling forward again found
     * nothing of them), are named once in a warning, and do not count among the kept ones.
     */
    @Test
    void aSnapshotOfANewerFormatVersionIsLeftInPlace() throws Exception {
        byte[] good = aSnapshot();
        byte[] newer = good.clone();
        newer[9] = 99; // the version field after the 8-byte magic: a format from the future, well-formed
        Path older = Files.write(dir.resolve("snapshot-0000000000000000001.kvix"), good);
        Path fromNewer = Files.write(dir.resolve("snapshot-0000000000000000002.kvix"), newer);
        SnapshotFiles files = new SnapshotFiles(dir);
        try (LogCapture log = LogCapture.warningsOf(SnapshotFiles.class)) {
            Path third = files.write(out -> out.write(good));
            Path fourth = files.write(out -> out.write(good));
            Path fifth = files.write(out -> out.write(good));

            assertThat(files.newestFirst()).containsExactly(fifth, fourth, fromNewer);
            assertThat(Files.readAllBytes(fromNewer)).isEqualTo(newer);
            assertThat(third).doesNotExist();
            assertThat(older).doesNotExist();
            assertThat(log.warnings())
                    .as("named once, not at every write")
                    .singleElement()
                    .asString()
                    .contains(fromNewer.toString(), "newer kv-indexer", "version 99", "left in place");
        }
        files.unlock();
    }

    /** A small valid snapshot: one registration, one index of two blocks. */
    private static byte[] aSnapshot() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        WorkerKey worker = new WorkerKey(7, 0);
        try (BinaryDumpWriter w = new BinaryDumpWriter(bytes, List.of())) {
            w.beginIndex("model", "tenant", 4);
            w.membership(worker, StorageTier.DEVICE, false, 0, 11, 21);
            w.membership(worker, StorageTier.DEVICE, true, 11, 12, 22);
            w.endIndex();
        }
        return bytes.toByteArray();
    }
}
