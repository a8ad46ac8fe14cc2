package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * With {@code --mix-cache-salt}, a replica that restarts from its snapshot, or recovers from a peer, keeps the salts
 * of the salted blocks it recovers: vLLM names a request's salt on its first block only, so a block the engine
 * stores afterwards under a recovered salted block is hashed with that salt, and a query with the salt matches the
 * whole chain, as it did before the restart. The same for a worker back within its {@code --unregister-grace}, with
 * or without a restart in between. Real replicas, real ZeroMQ, vLLM's event layout.
 */
class CacheSaltRecoveryTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String SALT = "tenant-a";

    @TempDir
    Path tmp;

    @Test
    void aChildStoredAfterARestartFromTheSnapshotIsHashedWithItsRecoveredParentsSalt() throws Exception {
        IndexerConfig config = snapshotting("snapshots", Duration.ZERO);
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp before = IndexerApp.start(config);
                    HttpTestClient http = new HttpTestClient(before.baseUrl())) {
                storeTheSaltedRoot(http, engine);
            } // its shutdown snapshot
            try (IndexerApp after = IndexerApp.start(config);
                    HttpTestClient http = new HttpTestClient(after.baseUrl())) {
                awaitReady(http);
                assertThat(score(http, SALT, 4))
                        .as("the salted root, from the snapshot")
                        .isEqualTo(4);
                storeTheChild(http, engine);
                assertThat(score(http, SALT, 8))
                        .as("the child hangs under the recovered root with its salt")
                        .isEqualTo(8);
            }
        }
    }

    @Test
    void aChildStoredAfterARecoveryFromAPeerIsHashedWithItsRecoveredParentsSalt() throws Exception {
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp peer = IndexerApp.start(IndexerConfig.defaults().with(c -> c.mixCacheSalt = true));
                HttpTestClient peerHttp = new HttpTestClient(peer.baseUrl())) {
            storeTheSaltedRoot(peerHttp, engine);
            try (IndexerApp replica = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                        c.mixCacheSalt = true;
                        c.peers = List.of(peer.baseUrl());
                    }));
                    HttpTestClient http = new HttpTestClient(replica.baseUrl())) {
                awaitReady(http);
                assertThat(score(http, SALT, 4))
                        .as("the salted root, from the peer")
                        .isEqualTo(4);
                // the registration came with the peer's dump: the replica listens to the engine too
                await().atMost(WAIT).until(() -> engine.subscriptions() >= 2);
                storeTheChild(http, engine);
                assertThat(score(http, SALT, 8)).isEqualTo(8);
                assertThat(score(peerHttp, SALT, 8))
                        .as("and on the peer, which never restarted")
                        .isEqualTo(8);
            }
        }
    }

    @Test
    void aWorkerBackWithinItsUnregisterGraceKeepsItsSaltsWithOrWithoutARestart() throws Exception {
        IndexerConfig config = snapshotting("grace", Duration.ofMinutes(5));
        try (EngineSimulator engine = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerApp before = IndexerApp.start(config);
                    HttpTestClient http = new HttpTestClient(before.baseUrl())) {
                storeTheSaltedRoot(http, engine);
                unregister(http);
                http.registerEngine(engine); // back: the detached blocks are attached again
                storeUnder(http, engine, 12, 11, 5, 100);
                assertThat(score(http, SALT, 8)).as("back without a restart").isEqualTo(8);
                unregister(http);
            } // the shutdown snapshot, and the grace file with the detached worker
            try (IndexerApp after = IndexerApp.start(config);
                    HttpTestClient http = new HttpTestClient(after.baseUrl())) {
                awaitReady(http);
                http.registerEngine(engine);
                storeUnder(http, engine, 13, 12, 9, 200);
                assertThat(score(http, SALT, 12)).as("back after a restart").isEqualTo(12);
            }
        }
    }

    /** Salts mixed, snapshots in {@code dir} (written at shutdown), {@code grace} as {@code --unregister-grace}. */
    private IndexerConfig snapshotting(String dir, Duration grace) {
        return IndexerConfig.defaults().with(c -> {
            c.snapshotDir = tmp.resolve(dir);
            c.snapshotInterval = Duration.ofHours(1);
            c.mixCacheSalt = true;
            c.unregisterGrace = grace;
        });
    }

    private static void unregister(HttpTestClient http) {
        http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}").assertStatus(200);
        assertThat(score(http, SALT, 4)).as("detached: hidden").isZero();
    }

    private static void storeTheSaltedRoot(HttpTestClient http, EngineSimulator engine) throws Exception {
        awaitReady(http);
        http.registerEngine(engine);
        engine.publishPayload(batch(stored(11, null, 1, SALT))).get(30, TimeUnit.SECONDS);
        await().atMost(WAIT).until(() -> score(http, SALT, 4) == 4);
        assertThat(score(http, null, 4))
                .as("salted: a query without the salt matches nothing")
                .isZero();
    }

    /** The next block of the request under the salted root (block 11, tokens 1..4). */
    private static void storeTheChild(HttpTestClient http, EngineSimulator engine) throws Exception {
        storeUnder(http, engine, 12, 11, 5, 100);
    }

    /**
     * A block of the request under {@code parent}, with no salt of its own (vLLM's), then an unsalted block of
     * tokens {@code marker}.. elsewhere: once that one answers, the block before it in the stream has been applied.
     */
    private static void storeUnder(
            HttpTestClient http, EngineSimulator engine, long hash, long parent, int first, int marker)
            throws Exception {
        engine.publishPayload(batch(stored(hash, parent, first, null))).get(30, TimeUnit.SECONDS);
        engine.publishPayload(batch(stored(10_000 + marker, null, marker, null)))
                .get(30, TimeUnit.SECONDS);
        await().atMost(WAIT).until(() -> score(http, null, marker, 4) == 4);
    }

    /** A vLLM BlockStored of one 4-token block starting at token {@code first}, its salt among its extra keys. */
    private static byte[] stored(long hash, Long parent, int first, String salt) throws Exception {
        MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(12);
        p.packString("BlockStored");
        p.packArrayHeader(1).packLong(hash);
        if (parent == null) {
            p.packNil();
        } else {
            p.packLong(parent);
        }
        p.packArrayHeader(4);
        for (int t = first; t < first + 4; t++) {
            p.packInt(t);
        }
        p.packInt(4).packNil().packString("GPU").packNil();
        if (salt == null) {
            p.packNil();
        } else {
            p.packArrayHeader(1).packArrayHeader(1).packString("dynamo-cache-salt:" + salt);
        }
        p.packNil().packNil().packNil();
        return p.toByteArray();
    }

    /** vLLM's batch: timestamp, events, data-parallel rank. */
    private static byte[] batch(byte[] event) throws Exception {
        MessageBufferPacker p = MessagePack.newDefaultBufferPacker();
        p.packArrayHeader(3).packDouble(System.currentTimeMillis() / 1000.0).packArrayHeader(1);
        p.addPayload(event);
        p.packInt(0);
        return p.toByteArray();
    }

    private static void awaitReady(HttpTestClient http) {
        await().atMost(WAIT).until(() -> http.get("/ready").status() == 200);
    }

    /** Engine 1's score for tokens 1..{@code n}, with {@code salt} (null: none). */
    private static int score(HttpTestClient http, String salt, int n) {
        return score(http, salt, 1, n);
    }

    private static int score(HttpTestClient http, String salt, int first, int n) {
        String tokens =
                IntStream.range(first, first + n).mapToObj(Integer::toString).collect(Collectors.joining(","));
        String body = "{\"model_name\":\"m\",\"token_ids\":[" + tokens + "]"
                + (salt == null ? "" : ",\"cache_salt\":\"" + salt + "\"") + "}";
        return http.post("/query", body).json().at("/scores/1/0").asInt();
    }
}
