package io.kvindexer.indexer.recovery;

import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import java.time.Duration;
import java.util.List;

/** A replica that recovers from peers at start: its configuration, and waiting until its recovery is over. */
final class Replicas {

    private Replicas() {}

    /** The defaults, recovering from {@code peers} (tried in order) once {@code delay} has passed. */
    static IndexerConfig recoveringFrom(Duration delay, String... peers) {
        return IndexerConfig.defaults().withPeers(List.of(peers)).withRecoveryDelay(delay);
    }

    /** Waits, at most a minute, for {@code /ready} to answer 200: recovery (from a peer or not) is over. */
    static void awaitReady(HttpTestClient replica) {
        await().atMost(Duration.ofSeconds(60)).until(() -> replica.get("/ready").status() == 200);
    }
}
