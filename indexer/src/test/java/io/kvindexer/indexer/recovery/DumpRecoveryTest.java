package io.kvindexer.indexer.recovery;

import static io.kvindexer.indexer.recovery.Replicas.awaitReady;
import static io.kvindexer.indexer.recovery.Replicas.recoveringFrom;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.index.ModelIndex;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Peer recovery between two real servers, with the first one's index filled directly (no engine needed):
 * {@code /dump} of the second equals the first's, queries agree, a model name with {@code ':'} survives, a dump
 * that cannot be parsed changes nothing and the next peer is tried.
 */
class DumpRecoveryTest {

    @TempDir
    java.nio.file.Path tmp;

    private static int[] range(int from, int to) {
        return IntStream.rangeClosed(from, to).toArray();
    }

    static void fill(IndexerApp app) throws Exception {
        ModelIndex llama = app.indexers().getOrCreate("org:llama", "default", 4);
        llama.submit(
                new WorkerKey(1, 0),
                List.<KvEvent>of(
                        new BlockStored(
                                new long[] {101, 102, 103},
                                false,
                                0,
                                range(1, 12),
                                4,
                                null,
                                StorageTier.DEVICE,
                                null,
                                false),
                        new BlockStored(
                                new long[] {104},
                                true,
                                103,
                                range(13, 16),
                                4,
                                null,
                                StorageTier.HOST_PINNED,
                                null,
                                false)));
        llama.submit(
                new WorkerKey(-2L, 3),
                List.<KvEvent>of(new BlockStored(
                        new long[] {101, 202},
                        false,
                        0,
                        concat(range(1, 4), range(50, 53)),
                        4,
                        null,
                        StorageTier.DEVICE,
                        null,
                        false)));
        ModelIndex other = app.indexers().getOrCreate("mistral", "t", 8);
        other.submit(
                new WorkerKey(5, 0),
                List.<KvEvent>of(new BlockStored(
                        new long[] {-7L}, false, 0, range(1, 8), 8, null, StorageTier.DISK, null, false)));
        app.indexers().flushAll().get(30, TimeUnit.SECONDS);
    }

    @Test
    void secondServerRecoversTheFirstsDump() throws Exception {
        try (IndexerApp first = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient a = new HttpTestClient(first.baseUrl())) {
            fill(first);
            String q = "{\"model_name\":\"org:llama\",\"token_ids\":" + json(range(1, 16)) + "}";
            String q2 = "{\"model_name\":\"mistral\",\"tenant_id\":\"t\",\"token_ids\":" + json(range(1, 8)) + "}";
            assertThat(a.post("/query", q).body())
                    .isEqualTo("{\"scores\":{\"1\":{\"0\":12},\"18446744073709551614\":"
                            + "{\"3\":4}},\"frequencies\":[],\"instances\":{\"1\":{\"longest_matched\":16,\"gpu\":12,\"dp\":{\"0\":12},"
                            + "\"cpu\":16,\"disk\":16,\"exact\":false},\"18446744073709551614\":{\"longest_matched\":4,\"gpu\":4,\"dp\":{\"3\":4},"
                            + "\"cpu\":4,\"disk\":4,\"exact\":false}}}");
            JsonNode dumpA = a.get("/dump").json();
            assertThat(dumpA.get("org:llama:default").get("model_name").asText())
                    .isEqualTo("org:llama");
            assertThat(dumpA.get("org:llama:default").get("events")).hasSize(6); // block 101 once per owner

            IndexerConfig cfg = recoveringFrom(Duration.ofMillis(20), "http://127.0.0.1:9", first.baseUrl());
            try (IndexerApp second = IndexerApp.start(cfg);
                    HttpTestClient b = new HttpTestClient(second.baseUrl())) {
                awaitReady(b);
                assertThat(DumpRecoveryTest.canonical(b.get("/dump").json()))
                        .isEqualTo(DumpRecoveryTest.canonical(dumpA));
                assertThat(b.post("/query", q).body())
                        .isEqualTo(a.post("/query", q).body());
                assertThat(b.post("/query", q2).body())
                        .isEqualTo(a.post("/query", q2).body());
                assertThat(b.get("/workers").body()).isEqualTo("[]");
                assertThat(b.get("/peers").json()).hasSize(2);
            }
        }
    }

    @Test
    void aBrokenPeerChangesNothingAndTheNextOneWins() throws Exception {
        // a "peer" that answers /dump with an error entry (as Dynamo does when one index fails) comes first
        try (IndexerApp good = IndexerApp.start(IndexerConfig.defaults());
                BrokenPeer broken = BrokenPeer.start(
                        "{\"m:default\":{\"block_size\":4,\"events\":[]},\"x:y\":{\"error\":\"boom\"}}")) {
            fill(good);
            IndexerConfig cfg = recoveringFrom(Duration.ofMillis(20), broken.url(), good.baseUrl());
            try (IndexerApp second = IndexerApp.start(cfg);
                    HttpTestClient b = new HttpTestClient(second.baseUrl())) {
                awaitReady(b);
                JsonNode dump = b.get("/dump").json();
                assertThat(dump.has("m:default"))
                        .as("nothing from the broken peer")
                        .isFalse();
                assertThat(dump.has("org:llama:default")).isTrue();
                assertThat(broken.requests()).isEqualTo(1);
            }
        }
    }

    @Test
    void aDynamoPeersIndexWithBlockSizeZeroIsSkippedAndTheRestRecovered() throws Exception {
        // Dynamo registers block_size 0 and keeps an index that holds nothing; ours cannot have one
        String stored = "{\"worker_id\":7,\"storage_tier\":\"device\",\"event\":{\"event_id\":0,\"data\":{\"stored\":"
                + "{\"parent_hash\":null,\"blocks\":[{\"block_hash\":5,\"tokens_hash\":5}]}},\"dp_rank\":0}}";
        try (BrokenPeer dynamo = BrokenPeer.start("{\"z:default\":{\"block_size\":0,\"events\":[]},"
                + "\"m:default\":{\"block_size\":4,\"events\":[" + stored + "]}}")) {
            IndexerConfig cfg = recoveringFrom(Duration.ofMillis(20), dynamo.url());
            try (IndexerApp second = IndexerApp.start(cfg);
                    HttpTestClient b = new HttpTestClient(second.baseUrl())) {
                awaitReady(b);
                JsonNode dump = b.get("/dump").json();
                assertThat(dump.has("z:default")).isFalse();
                assertThat(dump.get("m:default").get("events")).hasSize(1);
                assertThat(dynamo.requests()).isEqualTo(1);
            }
        }
    }

    @Test
    void aLargeDynamoDumpIsStagedWhileItIsReadAndRecoveredWhole() throws Exception {
        // more events than the writers are handed before the reader waits for them (DumpApplier), in two entries, the
        // second with its block_size after its events; three workers' chains interleaved
        int perWorker = DumpApplier.CHUNK * 8;
        StringBuilder body = new StringBuilder("{\"big:default\":{\"block_size\":4,\"events\":[");
        for (int i = 0; i < perWorker; i++) {
            for (int w = 1; w <= 3; w++) {
                long hash = w * 1_000_000L + i;
                body.append(i == 0 && w == 1 ? "" : ",").append(storedJson(w, i == 0 ? null : hash - 1, hash));
            }
        }
        body.append("]},\"late:default\":{\"events\":[")
                .append(storedJson(9, null, 77))
                .append("],\"block_size\":8}}");
        try (BrokenPeer dynamo = BrokenPeer.start(body.toString())) {
            IndexerConfig cfg = recoveringFrom(Duration.ofMillis(20), dynamo.url());
            try (IndexerApp second = IndexerApp.start(cfg);
                    HttpTestClient b = new HttpTestClient(second.baseUrl())) {
                awaitReady(b);
                assertThat(second.indexers()
                                .get("big", "default")
                                .orElseThrow()
                                .stats()
                                .memberships())
                        .isEqualTo(3L * perWorker);
                String q = "{\"model_name\":\"big\",\"block_hashes\":[2000000,2000001,2000002,5]}";
                assertThat(b.post("/query_by_hash", q).json().get("scores").toString())
                        .isEqualTo("{\"2\":{\"0\":12}}"); // 3 blocks of 4 tokens
                JsonNode late = b.get("/dump").json().get("late:default");
                assertThat(late.get("block_size").asInt()).isEqualTo(8);
                assertThat(late.get("events")).hasSize(1);
            }
        }
    }

    /** One Dynamo-shaped single-block Stored event of worker {@code w} (dp rank 0). */
    private static String storedJson(int w, Long parent, long hash) {
        return "{\"worker_id\":" + w + ",\"storage_tier\":\"device\",\"event\":{\"event_id\":0,\"data\":{\"stored\":"
                + "{\"parent_hash\":" + parent + ",\"blocks\":[{\"block_hash\":" + hash + ",\"tokens_hash\":" + hash
                + "}]}},\"dp_rank\":0}}";
    }

    /**
     * Two replicas restarted together, each the other's peer (standalone, with --peers): one that is still recovering
     * has nothing yet, and its /dump must not pass for a recovered peer's, or the other would take that nothing and
     * never read its own last snapshot. (Under the operator only Ready replicas are published as peers.)
     */
    @Test
    void aPeerStillRecoveringRefusesItsDumpAndTheSnapshotIsRead() throws Exception {
        java.nio.file.Path dir = snapshotOfFill();
        // its own peer does not answer, and it waits a minute before asking
        try (IndexerApp recovering = IndexerApp.start(recoveringFrom(Duration.ofSeconds(60), "http://127.0.0.1:9"));
                HttpTestClient peer = new HttpTestClient(recovering.baseUrl())) {
            assertThat(peer.get("/ready").status()).isEqualTo(503);
            try (IndexerApp restarted = restartedWith(dir, recovering.baseUrl());
                    HttpTestClient b = new HttpTestClient(restarted.baseUrl())) {
                awaitReady(b);
                JsonNode dump = b.get("/dump").json();
                assertThat(dump.has("org:llama:default"))
                        .as("read from its own snapshot")
                        .isTrue();
                assertThat(dump.get("org:llama:default").get("events")).hasSize(6);
            }
            HttpTestClient.Response refused = peer.get("/dump");
            assertThat(refused.status()).isEqualTo(503);
            assertThat(refused.json().get("error").asText()).contains("recovering_from_peer");
        }
    }

    /**
     * A blank peer (it recovered nothing, has stored no block, nothing was unregistered) knows nothing from before its own
     * start: the restarted replica reads its own snapshot and keeps only the registrations the blank one learned.
     */
    @Test
    void aBlankPeerDoesNotOutrankTheSnapshotAndItsRegistrationsAreKept() throws Exception {
        java.nio.file.Path dir = snapshotOfFill();
        try (IndexerApp blank = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient peer = new HttpTestClient(blank.baseUrl())) {
            peer.post("/register", REGISTRATION_9).assertStatus(201);
            assertThat(blankHeader(blank)).as("the blank peer says so").contains("true");
            try (IndexerApp restarted = restartedWith(dir, blank.baseUrl());
                    HttpTestClient b = new HttpTestClient(restarted.baseUrl())) {
                awaitReady(b);
                JsonNode dump = b.get("/dump").json();
                assertThat(dump.get("org:llama:default").get("events"))
                        .as("the snapshot's blocks, not the blank peer's none")
                        .hasSize(6);
                assertThat(b.get("/workers").json().findValuesAsText("instance_id"))
                        .as("the registration the blank peer learned is kept")
                        .contains("9");
                assertThat(blankHeader(restarted)).as("it recovered a snapshot").isEmpty();
                assertThat(b.metric(RECOVERY_SECONDS + "{source=\"snapshot\"}")).isGreaterThan(0);
            }
        }
    }

    /** A blank peer is passed over for the next one; taken alone, it leaves its taker blank too. */
    @Test
    void aBlankPeerIsPassedOverForTheNextOne() throws Exception {
        try (IndexerApp blank = IndexerApp.start(IndexerConfig.defaults());
                IndexerApp full = IndexerApp.start(IndexerConfig.defaults())) {
            fill(full);
            try (IndexerApp restarted =
                            IndexerApp.start(recoveringFrom(Duration.ofMillis(20), blank.baseUrl(), full.baseUrl()));
                    HttpTestClient b = new HttpTestClient(restarted.baseUrl())) {
                awaitReady(b);
                assertThat(b.get("/dump").json().get("org:llama:default").get("events"))
                        .hasSize(6);
                assertThat(b.metric(RECOVERY_SECONDS + "{source=\"peer\"}")).isGreaterThan(0);
                assertThat(b.metric(RECOVERY_SECONDS + "{source=\"blank_peer\"}"))
                        .isEqualTo(-1);
            }
            try (IndexerApp onlyBlank = IndexerApp.start(recoveringFrom(Duration.ofMillis(20), blank.baseUrl()));
                    HttpTestClient b = new HttpTestClient(onlyBlank.baseUrl())) {
                awaitReady(b);
                assertThat(blankHeader(onlyBlank)).contains("true");
                assertThat(b.metric(RECOVERY_SECONDS + "{source=\"blank_peer\"}"))
                        .isGreaterThan(0);
            }
            try (HttpTestClient peer = new HttpTestClient(blank.baseUrl())) {
                assertThat(peer.metric(RECOVERY_SECONDS + "{source=\"none\"}"))
                        .as("nothing to recover from")
                        .isZero();
            }
        }
    }

    /** A peer that applied an /unregister knows something the snapshot does not: its (empty) state wins. */
    @Test
    void aPeerThatUnregisteredIsNotBlankAndItsStateWins() throws Exception {
        java.nio.file.Path dir = snapshotOfFill();
        try (IndexerApp emptied = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient peer = new HttpTestClient(emptied.baseUrl())) {
            peer.post("/register", REGISTRATION_9).assertStatus(201);
            peer.post("/unregister", "{\"instance_id\":9,\"model_name\":\"org:llama\"}")
                    .assertStatus(200);
            assertThat(blankHeader(emptied)).isEmpty();
            try (IndexerApp restarted = restartedWith(dir, emptied.baseUrl());
                    HttpTestClient b = new HttpTestClient(restarted.baseUrl())) {
                awaitReady(b);
                assertThat(b.get("/dump").json().has("org:llama:default")).isFalse();
            }
        }
    }

    /** A replica whose blocks all went (here removed by the engine) knows they went: it is not blank. */
    @Test
    void aReplicaWhoseBlocksAllWentIsNotBlank() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults())) {
            assertThat(blankHeader(app)).contains("true");
            fill(app);
            assertThat(blankHeader(app)).isEmpty();
            ModelIndex other = app.indexers().get("mistral", "t").orElseThrow();
            other.submit(new WorkerKey(5, 0), List.<KvEvent>of(new BlockRemoved(new long[] {-7L}, StorageTier.DISK)));
            for (ModelIndex ix : app.indexers().all()) {
                for (WorkerKey w : List.of(new WorkerKey(1, 0), new WorkerKey(-2L, 3))) {
                    ix.submit(w, List.<KvEvent>of(new io.kvindexer.indexer.event.AllBlocksCleared()));
                }
            }
            app.indexers().flushAll().get(30, TimeUnit.SECONDS);
            assertThat(app.indexers().all()).allMatch(ix -> ix.stats().blocks() == 0);
            assertThat(blankHeader(app)).isEmpty();
        }
    }

    private static final String RECOVERY_SECONDS = "dynamo_kvindexer_startup_recovery_seconds";

    /** An engine nobody publishes at: a registration and nothing else. */
    private static final String REGISTRATION_9 =
            "{\"instance_id\":9,\"endpoint\":\"tcp://127.0.0.1:9\"," + "\"model_name\":\"org:llama\",\"block_size\":4}";

    /** A replica restarted with the snapshots in {@code dir}, recovering from {@code peers} first. */
    private static IndexerApp restartedWith(java.nio.file.Path dir, String... peers) throws Exception {
        return IndexerApp.start(recoveringFrom(Duration.ofMillis(20), peers).with(c -> c.snapshotDir = dir));
    }

    /** A snapshot directory holding {@link #fill}'s indexes. */
    private java.nio.file.Path snapshotOfFill() throws Exception {
        java.nio.file.Path dir = tmp.resolve("snapshots");
        try (IndexerApp before = IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = Duration.ofHours(1);
        }))) {
            fill(before);
            before.snapshots().write();
        }
        return dir;
    }

    /** The {@code X-Kvindexer-Blank} header of the replica's binary {@code /dump} (empty when absent). */
    private static java.util.Optional<String> blankHeader(IndexerApp app) throws Exception {
        try (java.net.http.HttpClient client = java.net.http.HttpClient.newHttpClient()) {
            java.net.http.HttpResponse<Void> r = client.send(
                    java.net.http.HttpRequest.newBuilder(
                                    java.net.URI.create(app.baseUrl() + "/dump?registrations=true"))
                            .header("Accept", io.kvindexer.indexer.dump.BinaryDump.MEDIA_TYPE)
                            .build(),
                    java.net.http.HttpResponse.BodyHandlers.discarding());
            assertThat(r.statusCode()).isEqualTo(200);
            return r.headers().firstValue(io.kvindexer.indexer.dump.BinaryDump.BLANK_HEADER);
        }
    }

    @Test
    void existingIndexKeepsItsBlockSize() throws Exception {
        try (IndexerApp first = IndexerApp.start(IndexerConfig.defaults())) {
            fill(first);
            // --model-name defaults to "default": make the flag-registered index collide with a recovered one
            IndexerConfig cfg = IndexerCli.parse(
                            new String[] {
                                "--host",
                                "127.0.0.1",
                                "--port",
                                "0",
                                "--threads",
                                "2",
                                "--block-size",
                                "16",
                                "--workers",
                                "9=tcp://127.0.0.1:1",
                                "--model-name",
                                "mistral",
                                "--tenant-id",
                                "t",
                                "--peers",
                                first.baseUrl()
                            },
                            Map.of())
                    .config()
                    .with(c -> c.recoveryDelay = Duration.ofMillis(20));
            try (IndexerApp second = IndexerApp.start(cfg);
                    HttpTestClient b = new HttpTestClient(second.baseUrl())) {
                awaitReady(b);
                JsonNode dump = b.get("/dump").json();
                assertThat(dump.get("mistral:t").get("block_size").asInt()).isEqualTo(16);
                // the peer's events are still applied (Dynamo: warning only, existing size kept)
                assertThat(dump.get("mistral:t").get("events")).hasSize(1);
                assertThat(dump.get("org:llama:default").get("events")).hasSize(6);
            }
        }
    }

    /** Events in a canonical order without event ids (dump order follows insertion; not part of the contract). */
    static JsonNode canonical(JsonNode dump) {
        com.fasterxml.jackson.databind.node.ObjectNode out = dump.deepCopy();
        out.properties().forEach(e -> {
            com.fasterxml.jackson.databind.node.ArrayNode events =
                    (com.fasterxml.jackson.databind.node.ArrayNode) e.getValue().get("events");
            java.util.List<JsonNode> list = new java.util.ArrayList<>();
            events.forEach(ev -> {
                com.fasterxml.jackson.databind.node.ObjectNode copy = ev.deepCopy();
                ((com.fasterxml.jackson.databind.node.ObjectNode) copy.get("event")).remove("event_id");
                list.add(copy);
            });
            list.sort(java.util.Comparator.comparing(JsonNode::toString));
            events.removeAll();
            list.forEach(events::add);
        });
        return out;
    }

    private static String json(int[] t) {
        return java.util.Arrays.toString(t).replace(" ", "");
    }

    private static int[] concat(int[] a, int[] b) {
        return IntStream.concat(IntStream.of(a), IntStream.of(b)).toArray();
    }
}
