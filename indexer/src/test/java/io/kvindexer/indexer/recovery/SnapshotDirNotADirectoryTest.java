package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.testkit.LogCapture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code --snapshot-dir} that names a file (a mount gone wrong, a path mistyped onto a file) starts the replica
 * empty with a warning that says so, not with "no snapshot in …", which reads as a first start.
 */
class SnapshotDirNotADirectoryTest {

    @Test
    void aFileInPlaceOfTheDirectoryIsNamedInAWarning(@TempDir Path tmp) throws Exception {
        Path file = Files.writeString(tmp.resolve("snapshots"), "not a directory");
        List<String> events = new ArrayList<>();
        try (Indexers indexers = new Indexers(IndexOptions.defaults());
                LogCapture log = LogCapture.warningsOf(SnapshotRecovery.class)) {
            assertThat(SnapshotRecovery.load(file, indexers, Duration.ofSeconds(5), events::add))
                    .isNull();
            assertThat(log.warnings())
                    .singleElement()
                    .asString()
                    .contains("--snapshot-dir " + file + " is not a directory", "starting empty");
        }
        assertThat(events).as("no snapshot file was damaged").isEmpty();
    }
}
