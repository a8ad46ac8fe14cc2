package io.kvindexer.indexer.recovery;

import static io.kvindexer.indexer.recovery.Replicas.awaitReady;
import static io.kvindexer.indexer.recovery.Replicas.recoveringFrom;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.index.IndexOp;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The binary {@code /dump} between real servers: it carries exactly what the JSON carries, plain {@code GET /dump}
 * is unchanged, a truncated or corrupted binary dump installs nothing, and recovery falls back to JSON for a
 * JSON-only (Dynamo) peer and after a binary dump that fails.
 */
class BinaryRecoveryTest {

    record Membership(
            long instanceId, int dpRank, StorageTier tier, boolean hasParent, long parent, long block, long local) {}

    /** Every index's memberships, keyed "model:tenant/blockSize" (order of the dump is not part of the contract). */
    static Map<String, Set<Membership>> content(Indexers indexers) {
        indexers.flushAll().orTimeout(30, TimeUnit.SECONDS).join();
        Map<String, Set<Membership>> out = new TreeMap<>();
        for (ModelIndex ix : indexers.all()) {
            Set<Membership> ms = new HashSet<>();
            ix.dump((w, tier, hasParent, parent, block, local) -> ms.add(
                    new Membership(w.instanceId(), w.dpRank(), tier, hasParent, hasParent ? parent : 0, block, local)));
            out.put(ix.modelName() + ":" + ix.tenantId() + "/" + ix.blockSize(), ms);
        }
        return out;
    }

    /** {@link DumpRecoveryTest#fill} plus an index large enough for several frames (chains of two workers). */
    static void fillLarge(IndexerApp app) throws Exception {
        DumpRecoveryTest.fill(app);
        ModelIndex big = app.indexers().getOrCreate("big", "t", 16);
        Random rnd = new Random(7);
        for (int c = 0; c < 400; c++) {
            long[] blocks = rnd.longs(20).toArray();
            long[] locals = rnd.longs(20).toArray();
            big.submitOps(
                    new WorkerKey(c % 5, c % 2),
                    List.of(IndexOp.Store.recovered(StorageTier.ofOrdinal(c % 4), false, 0, blocks, locals)));
            if (c % 3 == 0) { // a second owner of the first half of the chain
                big.submitOps(
                        new WorkerKey(100, 1),
                        List.of(IndexOp.Store.recovered(
                                StorageTier.DEVICE,
                                false,
                                0,
                                java.util.Arrays.copyOf(blocks, 10),
                                java.util.Arrays.copyOf(locals, 10))));
            }
        }
        app.indexers().flushAll().get(30, TimeUnit.SECONDS);
    }

    static HttpResponse<byte[]> getDump(String baseUrl, String accept) throws Exception {
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpRequest.Builder b =
                    HttpRequest.newBuilder(URI.create(baseUrl + "/dump")).GET();
            if (accept != null) {
                b.header("Accept", accept);
            }
            return client.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        }
    }

    @Test
    void binaryDumpRecoversExactlyWhatTheSourceHolds() throws Exception {
        try (IndexerApp source = IndexerApp.start(IndexerConfig.defaults())) {
            fillLarge(source);
            HttpResponse<byte[]> binary = getDump(source.baseUrl(), BinaryDump.MEDIA_TYPE);
            assertThat(binary.statusCode()).isEqualTo(200);
            assertThat(binary.headers().firstValue("Content-Type")).hasValue(BinaryDump.MEDIA_TYPE);
            // the block count of each section, in the stream's order: what a replica sizes its staging tables for
            assertThat(binary.headers().firstValue(BinaryDump.BLOCKS_HEADER))
                    .hasValue(String.join(
                            ",",
                            source.indexers().all().stream()
                                    .map(ix -> Long.toString(ix.stats().blocks()))
                                    .toList()));
            byte[] json = getDump(source.baseUrl(), null).body();
            assertThat(binary.body().length * 8)
                    .as("binary is much smaller than JSON")
                    .isLessThan(json.length);
            try (Indexers fresh = new Indexers(IndexOptions.defaults())) {
                int indexes = BinaryDumpApplier.apply(new ByteArrayInputStream(binary.body()), fresh, 30_000);
                assertThat(indexes).isEqualTo(3);
                assertThat(content(fresh)).isEqualTo(content(source.indexers()));
            }
        }
    }

    @Test
    void plainDumpStaysJsonByteForByte() throws Exception {
        try (IndexerApp source = IndexerApp.start(IndexerConfig.defaults())) {
            DumpRecoveryTest.fill(source);
            HttpResponse<byte[]> plain = getDump(source.baseUrl(), null);
            assertThat(plain.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
            for (String accept : List.of(
                    "*/*",
                    "application/json",
                    "application/json, */*;q=0.1",
                    BinaryDump.MEDIA_TYPE + ";q=0, application/json")) {
                HttpResponse<byte[]> r = getDump(source.baseUrl(), accept);
                assertThat(r.headers().firstValue("Content-Type").orElse(""))
                        .as(accept)
                        .startsWith("application/json");
                assertThat(r.body()).as(accept).isEqualTo(plain.body());
            }
        }
    }

    @Test
    void aTruncatedOrCorruptedBinaryDumpInstallsNothing() throws Exception {
        byte[] bytes;
        try (IndexerApp source = IndexerApp.start(IndexerConfig.defaults())) {
            fillLarge(source);
            bytes = getDump(source.baseUrl(), BinaryDump.MEDIA_TYPE).body();
        }
        Random rnd = new Random(11);
        List<byte[]> broken = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            int cut = i < 30 ? rnd.nextInt(bytes.length) : bytes.length - 1 - i % 10;
            broken.add(java.util.Arrays.copyOf(bytes, cut));
        }
        for (int i = 0; i < 40; i++) {
            byte[] flipped = bytes.clone();
            int bit = i < 30 ? rnd.nextInt(bytes.length * 8) : (bytes.length - 1 - i % 10) * 8 + i % 8;
            flipped[bit / 8] ^= (byte) (1 << (bit % 8));
            broken.add(flipped);
        }
        try (Indexers live = new Indexers(IndexOptions.defaults())) {
            // the live side already holds something of its own: it must stay exactly as it is
            live.getOrCreate("org:llama", "default", 4)
                    .submitOps(
                            new WorkerKey(77, 0),
                            List.of(IndexOp.Store.recovered(
                                    StorageTier.DEVICE, false, 0, new long[] {5}, new long[] {6})));
            Map<String, Set<Membership>> before = content(live);
            for (byte[] bad : broken) {
                assertThatThrownBy(() -> BinaryDumpApplier.apply(new ByteArrayInputStream(bad), live, 30_000))
                        .isInstanceOf(BinaryDump.FormatException.class);
                assertThat(content(live)).isEqualTo(before);
            }
        }
    }

    @Test
    void aJsonOnlyPeerIsRecoveredFromItsJson() throws Exception {
        try (IndexerApp source = IndexerApp.start(IndexerConfig.defaults())) {
            DumpRecoveryTest.fill(source);
            byte[] json = getDump(source.baseUrl(), null).body();
            try (BrokenPeer dynamo = BrokenPeer.serving(null, json);
                    IndexerApp replica = IndexerApp.start(recoveringFrom(Duration.ofMillis(10), dynamo.url()));
                    HttpTestClient r = new HttpTestClient(replica.baseUrl())) {
                awaitReady(r);
                assertThat(content(replica.indexers())).isEqualTo(content(source.indexers()));
                assertThat(dynamo.requests())
                        .as("one request: the JSON answer is read as it is")
                        .isEqualTo(1);
                assertThat(dynamo.accepts().get(0)).startsWith(BinaryDump.MEDIA_TYPE);
            }
        }
    }

    @Test
    void aFailingBinaryDumpIsFollowedByJsonFromTheSamePeer() throws Exception {
        try (IndexerApp source = IndexerApp.start(IndexerConfig.defaults())) {
            fillLarge(source);
            byte[] binary = getDump(source.baseUrl(), BinaryDump.MEDIA_TYPE).body();
            byte[] json = getDump(source.baseUrl(), null).body();
            byte[] corrupt = binary.clone();
            corrupt[corrupt.length / 2] ^= 0x10;
            try (BrokenPeer peer = BrokenPeer.serving(corrupt, json);
                    IndexerApp replica = IndexerApp.start(recoveringFrom(Duration.ofMillis(10), peer.url()));
                    HttpTestClient r = new HttpTestClient(replica.baseUrl())) {
                awaitReady(r);
                assertThat(content(replica.indexers())).isEqualTo(content(source.indexers()));
                assertThat(peer.accepts()).hasSize(2);
                assertThat(peer.accepts().get(0)).startsWith(BinaryDump.MEDIA_TYPE);
                assertThat(peer.accepts().get(1)).isEqualTo("null");
            }
        }
    }

    @Test
    void aReplicaRecoversFromABinaryPeerOverHttp() throws Exception {
        try (IndexerApp source = IndexerApp.start(IndexerConfig.defaults())) {
            fillLarge(source);
            try (IndexerApp replica = IndexerApp.start(recoveringFrom(Duration.ofMillis(10), source.baseUrl()));
                    HttpTestClient r = new HttpTestClient(replica.baseUrl())) {
                awaitReady(r);
                assertThat(content(replica.indexers())).isEqualTo(content(source.indexers()));
                assertThat(replica.indexers()
                                .get("big", "t")
                                .orElseThrow()
                                .stats()
                                .memberships())
                        .isEqualTo(source.indexers()
                                .get("big", "t")
                                .orElseThrow()
                                .stats()
                                .memberships());
            }
        }
    }
}
