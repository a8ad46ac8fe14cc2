package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.TransportSecurity;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.snapshot.SnapshotFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Peer recovery that throws instead of answering (here the {@code --tls-ca-file} is gone by the time the replica asks
 * its peers) is taken as no peer answering: the replica starts from its snapshot, and the snapshot writer runs as
 * configured. Before, the failure skipped both the snapshot and the writer: the replica started empty and never
 * wrote a snapshot again.
 */
class StartupRecoveryFailureTest {

    @TempDir
    Path tmp;

    @Test
    void aPeerRecoveryThatThrowsFallsBackOnTheSnapshotAndSnapshotsGoOn() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp before = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                        c.snapshotDir = dir;
                        c.snapshotInterval = Duration.ofHours(1);
                    }));
                    HttpTestClient http = new HttpTestClient(before.baseUrl())) {
                Replicas.awaitReady(http);
                Replicas.seed(http, engine);
            } // its shutdown snapshot
            Path loaded = new SnapshotFiles(dir).newestFirst().getFirst();
            IndexerConfig config = IndexerConfig.defaults().with(c -> {
                c.snapshotDir = dir;
                c.snapshotInterval = Duration.ofMillis(300);
                c.peers = List.of("https://127.0.0.1:1");
                c.recoveryDelay = Duration.ZERO;
                c.security = new TransportSecurity(
                        null, null, tmp.resolve("ca-gone.pem"), null, TransportSecurity.DEFAULT_RELOAD_INTERVAL);
            });
            try (IndexerApp app = IndexerApp.start(config);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                Replicas.awaitReady(http);
                assertThat(Replicas.score(http)).as("started from the snapshot").isEqualTo(8);
                await().atMost(Duration.ofSeconds(30))
                        .until(() ->
                                !new SnapshotFiles(dir).newestFirst().getFirst().equals(loaded));
                Path written = new SnapshotFiles(dir).newestFirst().getFirst();
                assertThat(Files.size(written)).as("the state it runs with").isGreaterThan(0);
            }
        }
    }
}
