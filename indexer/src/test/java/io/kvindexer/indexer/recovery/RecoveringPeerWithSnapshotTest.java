package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * All replicas down and back at once, some of them with a snapshot: a replica without one that asks a peer still
 * loading its snapshot waits for it (the peer's 503 carries a {@code Retry-After}) instead of turning Ready empty,
 * without registrations, for good while its peers come back with the state; a replica with a snapshot of its own
 * does not wait, so two of them never wait on each other.
 */
class RecoveringPeerWithSnapshotTest {

    @TempDir
    Path tmp;

    @Test
    void aReplicaWithoutSnapshotWaitsForThePeerThatIsLoadingOne() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            snapshot(dir, engine);
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

    @Test
    void aReplicaWithASnapshotOfItsOwnDoesNotWaitForOneLoadingItsSnapshot() throws Exception {
        Path dir = tmp.resolve("own");
        AtomicInteger asked = new AtomicInteger();
        // a peer restarted at the same moment, loading its own snapshot (503 with Retry-After, as DumpService)
        HttpServer peer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        peer.createContext("/dump", exchange -> {
            asked.incrementAndGet();
            byte[] body = "{\"error\":\"indexer is not ready: recovering_from_peer\"}".getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.getResponseHeaders().add("Retry-After", "1");
            exchange.sendResponseHeaders(503, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        peer.start();
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            snapshot(dir, engine);
            try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                        c.snapshotDir = dir;
                        c.snapshotInterval = Duration.ofHours(1);
                        c.peers =
                                List.of("http://127.0.0.1:" + peer.getAddress().getPort());
                        c.recoveryDelay = Duration.ZERO;
                    }));
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                // waiting would take a minute (six peer timeouts): its own snapshot is as good
                await().atMost(Duration.ofSeconds(45))
                        .until(() -> http.get("/ready").status() == 200);
                assertThat(Replicas.score(http)).isEqualTo(8);
                assertThat(asked.get())
                        .as("the peer loading its snapshot was asked once, not again")
                        .isEqualTo(1);
            }
        } finally {
            peer.stop(0);
        }
    }

    /** Writes a snapshot into {@code dir}: {@code engine} registered as instance 1 with {@link Replicas#TOKENS}. */
    private static void snapshot(Path dir, EngineSimulator engine) throws Exception {
        try (IndexerApp before = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                    c.snapshotDir = dir;
                    c.snapshotInterval = Duration.ofHours(1);
                }));
                HttpTestClient http = new HttpTestClient(before.baseUrl())) {
            Replicas.awaitReady(http);
            Replicas.seed(http, engine);
            before.snapshots().write();
        }
    }
}
