package io.kvindexer.indexer.recovery;

import static io.kvindexer.indexer.recovery.Replicas.awaitReady;
import static io.kvindexer.indexer.recovery.Replicas.recoveringFrom;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two real servers: the second starts with {@code --peers} = the first, recovers its index from the first's
 * {@code /dump} and ends up with the same dump and the same answers (compatibility.md, Startup, recovery and readiness, Dynamo's
 * _test_router_indexers_sync).
 */
class PeerRecoveryTest {

    private static int[] range(int from, int to) {
        return IntStream.rangeClosed(from, to).toArray();
    }

    private static String tokens(int[] t) {
        return java.util.Arrays.toString(t).replace(" ", "");
    }

    @Test
    void secondServerRecoversFromTheFirst() throws Exception {
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                EngineSimulator host = EngineSimulator.start(
                        EngineSimulator.Options.builder().dpRank(1).build());
                IndexerApp first = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient a = new HttpTestClient(first.baseUrl())) {
            a.post(
                            "/register",
                            "{\"instance_id\":1,\"endpoint\":\"" + sim.endpoint()
                                    + "\",\"model_name\":\"org:llama\",\"block_size\":4}")
                    .assertStatus(201);
            a.post(
                            "/register",
                            "{\"instance_id\":2,\"dp_rank\":1,\"endpoint\":\"" + host.endpoint()
                                    + "\",\"model_name\":\"mistral\",\"tenant_id\":\"t\",\"block_size\":8}")
                    .assertStatus(201);
            await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1 && host.subscriptions() >= 1);
            sim.storeSequence(range(1, 16), 4).get(30, TimeUnit.SECONDS);
            sim.storeSequence(range(1, 8 + 0), 4).get(30, TimeUnit.SECONDS);
            sim.storeSequence(concat(range(1, 8), range(50, 57)), 4).get(30, TimeUnit.SECONDS);
            host.storeSequence(range(1, 16), 8).get(30, TimeUnit.SECONDS);
            long[] h = EngineSimulator.sequenceHashes(range(1, 24), 8, null);
            host.publish(EngineSimulator.stored(new long[] {h[2]}, h[1], range(17, 24), 8, "CPU", null))
                    .get(30, TimeUnit.SECONDS);
            String q = "{\"model_name\":\"org:llama\",\"token_ids\":" + tokens(range(1, 16)) + "}";
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(
                                    a.post("/query", q).json().at("/scores/1/0").asInt())
                            .isEqualTo(16));
            String qHost =
                    "{\"model_name\":\"mistral\",\"tenant_id\":\"t\",\"token_ids\":" + tokens(range(1, 24)) + "}";
            await().atMost(Duration.ofSeconds(30))
                    .untilAsserted(() -> assertThat(a.post("/query", qHost)
                                    .json()
                                    .at("/instances/2/cpu")
                                    .asInt())
                            .isEqualTo(24));

            JsonNode dumpA = a.get("/dump").json();
            assertThat(dumpA.has("org:llama:default")).isTrue();
            assertThat(dumpA.get("org:llama:default").get("model_name").asText())
                    .isEqualTo("org:llama");
            assertThat(dumpA.get("mistral:t").get("block_size").asInt()).isEqualTo(8);

            // first unreachable: next wins
            IndexerConfig second = recoveringFrom(Duration.ofMillis(50), "http://127.0.0.1:9", first.baseUrl());
            try (IndexerApp b = IndexerApp.start(second);
                    HttpTestClient bc = new HttpTestClient(b.baseUrl())) {
                awaitReady(bc);
                JsonNode dumpB = bc.get("/dump").json();
                assertThat(DumpRecoveryTest.canonical(dumpB)).isEqualTo(DumpRecoveryTest.canonical(dumpA));
                assertThat(bc.post("/query", q).body())
                        .isEqualTo(a.post("/query", q).body());
                assertThat(bc.post("/query", qHost).body())
                        .isEqualTo(a.post("/query", qHost).body());
                // the registrations came with the tree: the same workers at the same endpoints (awaited: a
                // restored listener shows connected only once its own ZMTP handshake is done)
                await().atMost(Duration.ofSeconds(10))
                        .untilAsserted(() -> assertThat(workersWithoutSince(bc)).isEqualTo(workersWithoutSince(a)));
            }
        }
    }

    @Test
    void noReachablePeerStartsEmpty() throws Exception {
        IndexerConfig cfg = recoveringFrom(Duration.ofMillis(10), "http://127.0.0.1:9");
        try (IndexerApp app = IndexerApp.start(cfg);
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            awaitReady(http);
            assertThat(http.get("/dump").body()).isEqualTo("{}");
        }
    }

    /**
     * A peer that sends its headers and then stalls (or drips a byte at a time) fails within the peer timeout, and
     * the next peer is asked: the request's own timeout ends with the headers, and such a peer kept a restarting
     * replica not Ready for good.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    @Timeout(60) // it hung for good
    void aPeerThatStallsAfterItsHeadersGivesWayToTheNext(boolean drip) throws Exception {
        Duration timeout = Duration.ofSeconds(1);
        try (BrokenPeer stalled = BrokenPeer.stalling(drip);
                BrokenPeer good = BrokenPeer.start("{}");
                Indexers indexers = new Indexers(IndexOptions.defaults())) {
            long start = System.nanoTime();
            Recovered recovered =
                    new PeerRecovery(List.of(stalled.url(), good.url()), indexers, Duration.ZERO, timeout).fetch();
            assertThat(recovered).as("from the second peer").isNotNull();
            assertThat(stalled.requests()).isEqualTo(1);
            assertThat(good.requests()).isEqualTo(1);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
        }
    }

    /**
     * A peer whose body keeps coming above the minimum rate (64 KiB per peer timeout) but never ends is given up
     * after the whole-body bound ({@link PeerBodyDeadline#WHOLE_BODY_TIMEOUTS} peer timeouts; 3 here, so the test
     * does not sit out 30 s), and the next peer is asked: the minimum rate alone let it hold a restarting replica's
     * recovery for as long as it trickled.
     */
    @Test
    @Timeout(180)
    void aPeerThatTricklesForeverGivesWayToTheNextAfterTheWholeBodyBound() throws Exception {
        Duration timeout = Duration.ofSeconds(1); // the body's minimum rate: 64 KiB/s
        int wholeBodyTimeouts = 3; // past the first rate window, not only at it
        Duration bound = timeout.multipliedBy(wholeBodyTimeouts); // 3 s
        // 64 KiB every 100 ms: ten times the minimum rate (a loaded machine pauses), for up to 100 s (the old code
        // read all of it)
        try (BrokenPeer trickling =
                        BrokenPeer.trickling(PeerBodyDeadline.WINDOW, Duration.ofMillis(100), Duration.ofSeconds(100));
                BrokenPeer good = BrokenPeer.start("{}");
                Indexers indexers = new Indexers(IndexOptions.defaults())) {
            long start = System.nanoTime();
            Recovered recovered = new PeerRecovery(
                            List.of(trickling.url(), good.url()), indexers, Duration.ZERO, timeout)
                    .withWholeBodyBoundForTests(wholeBodyTimeouts)
                    .fetch();
            Duration took = Duration.ofNanos(System.nanoTime() - start);

            assertThat(recovered).as("from the second peer").isNotNull();
            assertThat(trickling.requests()).isEqualTo(1);
            assertThat(good.requests()).isEqualTo(1);
            assertThat(trickling.trickled())
                    .as("the body kept coming above the minimum rate until the bound")
                    .isGreaterThan(PeerBodyDeadline.WINDOW * (bound.toMillis() / timeout.toMillis()) / 2);
            assertThat(took).isLessThan(bound.plus(Duration.ofSeconds(20))); // below the default bound too
        }
    }

    /**
     * A peer whose dump slots are all taken (503 with Retry-After, as when many replicas start at once) has the state:
     * it is asked again after its Retry-After, not passed over for a start without it (an unreachable peer beside it
     * is not asked again); and not for longer than {@link PeerRecovery#BUSY_PATIENCE_TIMEOUTS} peer timeouts.
     */
    @Test
    @Timeout(60)
    void aBusyPeerIsAskedAgainAfterItsRetryAfter() throws Exception {
        try (BrokenPeer busy = BrokenPeer.busy(2, "{}");
                Indexers indexers = new Indexers(IndexOptions.defaults())) {
            long start = System.nanoTime();
            Recovered recovered = new PeerRecovery(
                            List.of("http://127.0.0.1:9", busy.url()), indexers, Duration.ZERO, Duration.ofSeconds(10))
                    .fetch();
            assertThat(recovered).as("from the busy peer, once it had a slot").isNotNull();
            assertThat(busy.requests()).isEqualTo(3);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
        }
        try (BrokenPeer stillBusy = BrokenPeer.busy(1000, "{}");
                Indexers indexers = new Indexers(IndexOptions.defaults())) {
            Recovered recovered =
                    new PeerRecovery(List.of(stillBusy.url()), indexers, Duration.ZERO, Duration.ofSeconds(1)).fetch();
            assertThat(recovered).as("busy beyond the patience: none").isNull();
            assertThat(stillBusy.requests())
                    .as("asked for about %s peer timeouts", PeerRecovery.BUSY_PATIENCE_TIMEOUTS)
                    .isBetween(2, PeerRecovery.BUSY_PATIENCE_TIMEOUTS + 2);
        }
    }

    @Test
    void theFirstRequestWaitsForTheWholeDelay() throws Exception {
        Duration delay = Duration.ofMillis(400);
        try (BrokenPeer peer = BrokenPeer.start("{}"); // a JSON-only peer with nothing to recover
                Indexers indexers = new Indexers(IndexOptions.defaults())) {
            long start = System.nanoTime();
            // the client is set up within the delay now, not after it; the request still waits for all of it
            Recovered recovered =
                    new PeerRecovery(List.of(peer.url()), indexers, delay, Duration.ofSeconds(10)).fetch();
            assertThat(recovered).isNotNull();
            assertThat(peer.requests()).isEqualTo(1);
            assertThat(Duration.ofNanos(peer.firstRequestNanos() - start)).isGreaterThanOrEqualTo(delay);
        }
    }

    /**
     * A peer registered with a trailing slash ({@code http://peer:8090/}, as users often write it) is asked for
     * {@code /dump}, not {@code //dump}: our server forgives the double slash, a stricter one (Dynamo's, this JDK
     * server) answers 404.
     */
    @Test
    void aPeerUrlWithATrailingSlashIsAskedForSlashDump() throws Exception {
        try (BrokenPeer peer = BrokenPeer.start("{}");
                Indexers indexers = new Indexers(IndexOptions.defaults())) {
            Recovered recovered = new PeerRecovery(
                            List.of(peer.url() + "/"), indexers, Duration.ZERO, Duration.ofSeconds(10))
                    .fetch();
            assertThat(recovered).isNotNull();
            assertThat(peer.requests()).isEqualTo(1);
        }
    }

    private static int[] concat(int[] a, int[] b) {
        return IntStream.concat(IntStream.of(a), IntStream.of(b)).toArray();
    }

    /**
     * {@code /workers} without each listener's {@code exactness_since_ms} and {@code last_batch_ms}: when a listener
     * became exact, and when it last applied a batch, are its own replica's moments (a recovered one has applied none
     * yet), so they differ between two replicas that agree on everything else, {@code last_seq} included.
     */
    private static JsonNode workersWithoutSince(HttpTestClient client) {
        JsonNode workers = client.get("/workers").json();
        workers.forEach(w -> w.path("listeners")
                .forEach(l -> ((ObjectNode) l).remove(List.of("exactness_since_ms", "last_batch_ms"))));
        return workers;
    }
}
