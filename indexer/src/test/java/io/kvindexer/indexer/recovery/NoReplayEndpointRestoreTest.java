package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.dump.BinaryDumpReader;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A registration without a replay endpoint, restored from this replica's own snapshot: nobody listened to its engine
 * since the snapshot was written, and what the engine published meanwhile cannot be asked for. It was {@code exact}
 * at once, claiming the snapshot's blocks for as long as the engine stayed idle; it is now {@code replaying} until
 * the engine's next batch shows whether its seq continues. One recovered from a peer's dump, whose watermark meets
 * the live stream, stays exact at once (holding it too showed every idle worker {@code Degraded} after a rollout),
 * unless the peer's watermark is itself such a snapshot's, still waiting (its dump marks it, version 6).
 */
class NoReplayEndpointRestoreTest {

    @TempDir
    Path tmp;

    private static IndexerApp snapshotting(Path dir) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
        }));
    }

    private static JsonNode listener(HttpTestClient http) {
        return http.get("/workers").json().at("/0/listeners/0");
    }

    /** Instance 1 on {@code http} without a replay endpoint, its first batch (seq 0) applied. */
    private static void seeded(HttpTestClient http, EngineSimulator sim) throws Exception {
        Replicas.awaitReady(http);
        Replicas.seed(http, sim);
        assertThat(listener(http).path("exactness").asText()).isEqualTo("exact");
    }

    /** Restored and listening again: the engine's second subscription is this replica's. */
    private static void listeningAgain(HttpTestClient http, EngineSimulator sim) {
        listeningAgain(http, sim, 2);
    }

    /** Restored and listening again: the engine's {@code subscriptions}th subscription is this replica's. */
    private static void listeningAgain(HttpTestClient http, EngineSimulator sim, int subscriptions) {
        Replicas.awaitReady(http);
        await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= subscriptions);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> listener(http).path("status").asText().equals("active"));
        assertThat(Replicas.score(http)).as("the snapshot's blocks are back").isEqualTo(8);
    }

    /** The binary {@code /dump} of {@code app} as a peer asks for it with {@code query}, read through. */
    private static Dumped dump(IndexerApp app, String query) throws Exception {
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpResponse<byte[]> res = client.send(
                    HttpRequest.newBuilder(URI.create(app.baseUrl() + "/dump" + query))
                            .header("Accept", BinaryDump.MEDIA_TYPE)
                            .build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            assertThat(res.statusCode()).isEqualTo(200);
            List<SavedRegistration> registrations = new ArrayList<>();
            BinaryDumpReader.read(new ByteArrayInputStream(res.body()), new BinaryDumpReader.Visitor() {
                @Override
                public void registration(SavedRegistration registration) {
                    registrations.add(registration);
                }
            });
            return new Dumped(res.body()[9], registrations);
        }
    }

    /** A dump's version and registrations. */
    private record Dumped(int version, List<SavedRegistration> registrations) {
        List<Boolean> marks() {
            return registrations.stream().map(SavedRegistration::fromSnapshot).toList();
        }
    }

    /** What this version's peer recovery asks for: the marks too. */
    private static final String MARKS = "?registrations=true&store_times=true&watermark_batches=true"
            + "&cache_salts=true&snapshot_watermarks=true";
    /** What the version before asked for: no marks. */
    private static final String BEFORE_MARKS =
            "?registrations=true&store_times=true&watermark_batches=true" + "&cache_salts=true";

    private static void storeMore(EngineSimulator sim, int first) throws Exception {
        sim.storeSequence(new int[] {first, first + 1, first + 2, first + 3}, 4).get(30, TimeUnit.SECONDS);
    }

    @Test
    void restoredFromItsOwnSnapshotItIsNotExactUntilABatchContinuesTheSeq() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp app = snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                seeded(http, sim);
            } // (the shutdown writes the last snapshot)
            try (IndexerApp app = snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                listeningAgain(http, sim);
                // the engine is idle: nothing shows whether it published while the replica was down
                JsonNode idle = listener(http);
                assertThat(idle.path("exactness").asText()).isEqualTo("replaying");
                assertThat(idle.path("exactness_reason").asText()).contains("snapshot", "next batch");
                assertThat(http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8]}")
                                .json()
                                .at("/instances/1/exact")
                                .asBoolean(true))
                        .as("a query answer does not call the instance exact")
                        .isFalse();
                storeMore(sim, 101); // seq 1, right after the snapshot's seq 0: nothing was missed
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> listener(http).path("exactness").asText().equals("exact"));
                assertThat(listener(http).path("last_seq").asInt()).isEqualTo(1);
            }
        }
    }

    @Test
    void restoredFromItsOwnSnapshotItTurnsDegradedWhenTheNextBatchShowsAGap() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp app = snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                seeded(http, sim);
            }
            storeMore(sim, 201); // seq 1, published while no replica listened
            try (IndexerApp app = snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                listeningAgain(http, sim);
                assertThat(listener(http).path("exactness").asText()).isEqualTo("replaying");
                storeMore(sim, 301); // seq 2 shows seq 1 missed
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> listener(http).path("exactness").asText().equals("degraded"));
            }
        }
    }

    /**
     * All replicas down and back: A restores from its snapshot and waits for the engine's next batch; B recovers from
     * A. A's dump passed its watermark on as current, and B was exact at once, claiming what A could not vouch for.
     * A's dump now marks it a snapshot's, and B waits for the same batch; once it came, neither dump marks it.
     */
    @Test
    void recoveredFromAPeerStillWaitingOnItsSnapshotItWaitsForTheSameBatch() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp app = snapshotting(dir);
                    HttpTestClient http = new HttpTestClient(app.baseUrl())) {
                seeded(http, sim);
            }
            try (IndexerApp a = snapshotting(dir);
                    HttpTestClient httpA = new HttpTestClient(a.baseUrl())) {
                listeningAgain(httpA, sim);
                assertThat(listener(httpA).path("exactness").asText()).isEqualTo("replaying");
                Dumped marked = dump(a, MARKS);
                assertThat(marked.version()).isEqualTo(BinaryDump.VERSION_WITH_SNAPSHOT_WATERMARKS);
                assertThat(marked.marks()).containsExactly(true);
                // a replica of the version before does not ask: it gets what it reads, no mark in it
                Dumped unasked = dump(a, BEFORE_MARKS);
                assertThat(unasked.version()).isEqualTo(BinaryDump.VERSION_WITH_WATERMARK_BATCHES);
                assertThat(unasked.marks()).containsExactly(false);
                try (IndexerApp b = IndexerApp.start(Replicas.recoveringFrom(Duration.ofMillis(100), a.baseUrl()));
                        HttpTestClient httpB = new HttpTestClient(b.baseUrl())) {
                    listeningAgain(httpB, sim, 3);
                    assertThat(listener(httpB).path("last_seq").asInt()).isZero();
                    JsonNode idle = listener(httpB);
                    assertThat(idle.path("exactness").asText())
                            .as("A's watermark is its snapshot's: nothing showed yet that the engine did not go on")
                            .isEqualTo("replaying");
                    assertThat(idle.path("exactness_reason").asText()).contains("snapshot", "next batch");
                    assertThat(dump(b, MARKS).marks()).as("passed on again").containsExactly(true);
                    storeMore(sim, 101); // seq 1, right after the snapshot's seq 0: nothing was missed
                    for (HttpTestClient http : List.of(httpA, httpB)) {
                        await().atMost(Duration.ofSeconds(30))
                                .until(() -> listener(http)
                                        .path("exactness")
                                        .asText()
                                        .equals("exact"));
                        assertThat(listener(http).path("last_seq").asInt()).isEqualTo(1);
                    }
                    assertThat(dump(a, MARKS).marks()).as("proven: current").containsExactly(false);
                    assertThat(dump(b, MARKS).marks()).as("proven: current").containsExactly(false);
                }
            }
        }
    }

    @Test
    void recoveredFromAPeersDumpItIsExactAtOnce() throws Exception {
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peerApp = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient peer = new HttpTestClient(peerApp.baseUrl())) {
            seeded(peer, sim);
            try (IndexerApp replica =
                            IndexerApp.start(Replicas.recoveringFrom(Duration.ofMillis(100), peerApp.baseUrl()));
                    HttpTestClient http = new HttpTestClient(replica.baseUrl())) {
                listeningAgain(http, sim);
                assertThat(listener(http).path("last_seq").asInt()).isZero();
                // the peer listened all along: its watermark meets the live stream, though the engine is idle
                assertThat(listener(http).path("exactness").asText()).isEqualTo("exact");
            }
        }
    }
}
