package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * All replicas down and back at once, only one of them with a snapshot: a replica without one that asks the one
 * still loading its snapshot waits for it (the peer's 503 carries a {@code Retry-After}) instead of turning Ready
 * empty, without registrations, for good while its peers come back with the state.
 */
class RecoveringPeerWithSnapshotTest {

    @TempDir
    Path tmp;

    @Test
    void aReplicaWithoutSnapshotWaitsForThePeerThatIsLoadingOne() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp before = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                        c.snapshotDir = dir;
                        c.snapshotInterval = Duration.ofHours(1);
                    }));
                    HttpTestClient http = new HttpTestClient(before.baseUrl())) {
                Replicas.awaitReady(http);
                Replicas.seed(http, engine);
                before.snapshots().write();
            }
            // the snapshot holder asks its peer (down) first and stays recovering a few seconds
            IndexerConfig holder = IndexerConfig.defaults().with(c -> {
                c.snapshotDir = dir;
                c.snapshotInterval = Duration.ofHours(1);
                c.peers = List.of("http://127.0.0.1:1");
                c.recoveryDelay = Duration.ofSeconds(4);
            });
            try (IndexerApp withSnapshot = IndexerApp.start(holder);
                    HttpTestClient a = new HttpTestClient(withSnapshot.baseUrl());
                    IndexerApp without =
                            IndexerApp.start(Replicas.recoveringFrom(Duration.ZERO, withSnapshot.baseUrl()));
                    HttpTestClient b = new HttpTestClient(without.baseUrl())) {
                Replicas.awaitReady(b);
                Replicas.awaitReady(a);
                assertThat(Replicas.score(a)).isEqualTo(8);
                assertThat(Replicas.score(b))
                        .as("recovered from the peer once its snapshot was loaded")
                        .isEqualTo(8);
                assertThat(b.get("/workers").json().findValuesAsText("instance_id"))
                        .containsExactly("1");
            }
        }
    }
}
