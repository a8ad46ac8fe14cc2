package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica stopped while its startup recovery still runs (a SIGTERM in its first seconds): the recovery may end
 * after the close and start the snapshot writer then. That start does nothing: no writer thread outlives the close
 * and writes into a directory the replica has let go of.
 */
class StartAfterCloseTest {

    @Test
    void aStartAfterTheCloseWritesNothing(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("snapshots");
        IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofMillis(100);
            c.peers = List.of("http://127.0.0.1:1");
            c.recoveryDelay = Duration.ofHours(1); // still recovering at the close
        }));
        app.close();
        app.snapshots().start(); // what the recovery thread does once its recovery ends

        Thread.sleep(2_000); // twenty intervals: a started writer would have written by now
        try (Stream<Path> files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .as("nothing written after the close")
                    .noneMatch(n -> n.startsWith("snapshot-"));
        }
    }
}
