package io.kvindexer.indexer.expiry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.kvindexer.indexer.IndexerProcess;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A block's TTL runs from its last store across a restart, real processes: a replica restarted from its snapshot,
 * and one recovering from a peer's binary or JSON {@code /dump}, expire a block stored once at store time + TTL, not at
 * their own start + TTL; so does a replica that gives a worker its blocks back after {@code --unregister-grace}. TTL
 * 16 s, the new replica is started (or the worker comes back) 6 s after the store or later, so the block is due at
 * store + 16 s; the test wants it gone before that start + TTL, which a clock started at the load (after that start)
 * can never meet, and which leaves a slow machine the 6 s and however late the start was. The new replica must be
 * Ready within the TTL of its start: 4-5 s on a quiet host, 10.7 s once in CI beside other work (when the TTL was
 * 13 s). The methods mostly wait for the TTL, so they run two at once (each its own simulator, replicas and
 * directory); their new replicas then start together, hence the 3 s more: under a load average of 16 on 2 cores they
 * were Ready 7 s after their start at the latest.
 */
class TtlAcrossRestartTest {

    private static final int[] TOKENS = {1, 2, 3, 4, 5, 6, 7, 8};
    private static final String QUERY = "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4,5,6,7,8]}";
    private static final Duration TTL = Duration.ofSeconds(16);
    private static final Duration RESTART_AFTER = Duration.ofSeconds(6);

    private static final String SERIES = "dynamo_kvindexer_blocks_expired_total{reason=\"ttl\",tier=\"device\"}";

    @TempDir
    Path tmp;

    private static int score(HttpTestClient http) {
        return http.post("/query", QUERY).json().at("/scores/1/0").asInt(0);
    }

    private static void awaitReady(HttpTestClient http) {
        await().atMost(Duration.ofSeconds(60)).until(() -> http.get("/ready").status() == 200);
    }

    /** A snapshotting replica with the test's TTL on the device tier, and {@code more} flags. */
    private static IndexerProcess replica(Path dir, String... more) throws Exception {
        return replica(dir, TTL, more);
    }

    private static IndexerProcess replica(Path dir, Duration ttl, String... more) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of("--block-ttl", "device=" + ttl.toSeconds() + "s"));
        args.addAll(List.of(more));
        return IndexerProcess.snapshotting(dir, args.toArray(String[]::new));
    }

    /** Stores the two blocks once on {@code http}'s replica; returns the moment just before the store (nanoTime). */
    private static long storeOnce(EngineSimulator sim, HttpTestClient http) throws Exception {
        http.registerEngine(sim);
        long storedAt = System.nanoTime();
        sim.storeSequence(TOKENS, 4).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> score(http) == 8);
        return storedAt;
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }

    /**
     * Both blocks expire through the normal path (the counter says so) before {@code cameBackAt} (nanoTime, just
     * before the new replica was started or the worker registered again) + TTL.
     */
    private static void assertExpiredInTime(HttpTestClient http, long cameBackAt) {
        Duration left = Duration.ofNanos(cameBackAt + TTL.toNanos() - System.nanoTime());
        assertThat(left).as("the replica was ready before the deadline").isPositive();
        await().atMost(left).until(() -> http.metric(SERIES) == 2);
        assertThat(score(http)).isZero();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aBlockRestoredFromASnapshotExpiresAtItsStoreTimePlusTtl() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            long storedAt;
            try (IndexerProcess first = replica(dir);
                    HttpTestClient http = new HttpTestClient(first.url())) {
                awaitReady(http);
                storedAt = storeOnce(sim, http);
                assertThat(first.terminate()).isTrue(); // writes the last snapshot at shutdown
            }
            sleepUntil(storedAt + RESTART_AFTER.toNanos());
            long cameBackAt = System.nanoTime();
            try (IndexerProcess second = replica(dir);
                    HttpTestClient http = new HttpTestClient(second.url())) {
                awaitReady(http);
                assertExpiredInTime(http, cameBackAt);
            }
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aBlockRecoveredFromAPeersBinaryDumpExpiresAtItsStoreTimePlusTtl() throws Exception {
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                // the peer keeps its blocks past the test: on a slow start it must still have them to hand over
                IndexerProcess peer = replica(tmp.resolve("peer"), Duration.ofMinutes(10));
                HttpTestClient peerHttp = new HttpTestClient(peer.url())) {
            awaitReady(peerHttp);
            long storedAt = storeOnce(sim, peerHttp);
            sleepUntil(storedAt + RESTART_AFTER.toNanos());
            long cameBackAt = System.nanoTime();
            try (IndexerProcess second = replica(tmp.resolve("second"), "--peers", peer.url());
                    HttpTestClient http = new HttpTestClient(second.url())) {
                awaitReady(http);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> second.output().contains("P2P recovery completed from " + peer.url()));
                assertExpiredInTime(http, cameBackAt);
            }
        }
    }

    /**
     * A peer that serves only JSON, as a Dynamo indexer does (it ignores the Accept): here our replica's own JSON
     * {@code /dump}, read once, so the recovering replica takes the JSON path with our {@code last_store_ms} in it.
     */
    private static HttpServer jsonOnlyPeer(String json) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        server.createContext("/dump", exchange -> {
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return server;
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aBlockRecoveredFromAPeersJsonDumpExpiresAtItsStoreTimePlusTtl() throws Exception {
        String json;
        long storedAt;
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerProcess peer = replica(tmp.resolve("peer"), Duration.ofMinutes(10));
                HttpTestClient peerHttp = new HttpTestClient(peer.url())) {
            awaitReady(peerHttp);
            storedAt = storeOnce(sim, peerHttp);
            json = peerHttp.get("/dump").assertStatus(200).body();
        }
        HttpServer jsonPeer = jsonOnlyPeer(json);
        try {
            String url = "http://127.0.0.1:" + jsonPeer.getAddress().getPort();
            sleepUntil(storedAt + RESTART_AFTER.toNanos());
            long cameBackAt = System.nanoTime();
            try (IndexerProcess second = replica(tmp.resolve("second"), "--peers", url);
                    HttpTestClient http = new HttpTestClient(second.url())) {
                awaitReady(http);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> second.output().contains("P2P recovery completed from " + url));
                assertExpiredInTime(http, cameBackAt);
            }
        } finally {
            jsonPeer.stop(0);
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aBlockGivenBackAfterTheUnregisterGraceExpiresAtItsStoreTimePlusTtl() throws Exception {
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerProcess replica = replica(tmp.resolve("grace"), "--unregister-grace", "60s");
                HttpTestClient http = new HttpTestClient(replica.url())) {
            awaitReady(http);
            long storedAt = storeOnce(sim, http);
            http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}").assertStatus(200);
            assertThat(score(http)).isZero();
            sleepUntil(storedAt + RESTART_AFTER.toNanos());
            long cameBackAt = System.nanoTime();
            http.registerEngine(sim); // the same endpoint: its blocks are given back
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> replica.output().contains("detached memberships attached again"));
            assertExpiredInTime(http, cameBackAt);
        }
    }
}
