package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.index.ModelIndex;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /query_tiered_by_hash} against a real server: the exact shape Dynamo's selection service reads, with
 * device scores and per-tier hits in blocks.
 */
class TieredQueryTest {

    private static final int B = 4;
    private static IndexerApp app;
    private static HttpTestClient http;
    private static String hashes;

    /** {@code B} copies of each content value: a block's tokens. */
    private static int[] tokens(int... contents) {
        return Arrays.stream(contents)
                .flatMap(c -> Arrays.stream(new int[B]).map(x -> c))
                .toArray();
    }

    private static BlockStored stored(StorageTier tier, Long parent, long[] blocks, int... contents) {
        return new BlockStored(
                blocks, parent != null, parent == null ? 0 : parent, tokens(contents), B, null, tier, null, false);
    }

    @BeforeAll
    static void start() throws Exception {
        app = IndexerApp.start(IndexerConfig.defaults());
        http = new HttpTestClient(app.baseUrl());
        ModelIndex ix = app.indexers().getOrCreate("m", "t", B);
        // worker 1/0: two device blocks, then one block on each lower tier, continuing the chain
        ix.submit(
                new WorkerKey(1, 0),
                List.<KvEvent>of(
                        stored(StorageTier.DEVICE, null, new long[] {101, 102}, 1, 2),
                        stored(StorageTier.HOST_PINNED, 102L, new long[] {103}, 3),
                        stored(StorageTier.DISK, 103L, new long[] {104}, 4),
                        stored(StorageTier.EXTERNAL, 104L, new long[] {105}, 5)));
        // worker 2/3: nothing on device, the first block at the root of the host tier
        ix.submit(new WorkerKey(2, 3), List.<KvEvent>of(stored(StorageTier.HOST_PINNED, null, new long[] {201}, 1)));
        // worker 5/0: the first device block only
        ix.submit(new WorkerKey(5, 0), List.<KvEvent>of(stored(StorageTier.DEVICE, null, new long[] {101}, 1)));
        // worker 2^64-1/0: two blocks at the root of the disk tier
        ix.submit(new WorkerKey(-1L, 0), List.<KvEvent>of(stored(StorageTier.DISK, null, new long[] {301, 302}, 1, 2)));
        app.indexers().flushAll().get(30, TimeUnit.SECONDS);
        hashes = Arrays.stream(ix.localHashes(tokens(1, 2, 3, 4, 5), null, null))
                .mapToObj(Long::toString)
                .collect(Collectors.joining(",", "[", "]"));
    }

    @AfterAll
    static void stop() {
        http.close();
        app.close();
    }

    private static String w(String id, int rank) {
        return "{\"worker_id\":" + id + ",\"dp_rank\":" + rank + "}";
    }

    @Test
    void answersDynamosTieredShapeInBlocks() {
        String expected = "{\"block_size\":4,\"tiered\":{\"device\":{\"scores\":[[" + w("1", 0) + ",2],[" + w("5", 0)
                + ",1]],\"frequencies\":[]},\"lower_tier\":["
                + "[\"host_pinned\",{\"hits\":[[" + w("1", 0) + ",1],[" + w("2", 3) + ",1],[" + w("5", 0) + ",0]]}],"
                + "[\"disk\",{\"hits\":[[" + w("1", 0) + ",1],[" + w("2", 3) + ",0],[" + w("5", 0) + ",0],["
                + w("18446744073709551615", 0) + ",2]]}],"
                + "[\"external\",{\"hits\":[[" + w("1", 0) + ",1],[" + w("2", 3) + ",0],[" + w("5", 0) + ",0],["
                + w("18446744073709551615", 0) + ",0]]}]]},"
                // ours: no listener vouches for blocks submitted straight to the index
                + "\"instances\":{\"1\":{\"exact\":false},\"2\":{\"exact\":false},\"5\":{\"exact\":false},"
                + "\"18446744073709551615\":{\"exact\":false}}}";
        for (String tenant : List.of("\"routing_group\":\"t\"", "\"tenant_id\":\"t\"")) {
            HttpTestClient.Response r = http.post(
                    "/query_tiered_by_hash", "{\"block_hashes\":" + hashes + ",\"model_name\":\"m\"," + tenant + "}");
            assertThat(r.status()).as(r.body()).isEqualTo(200);
            assertThat(r.contentType()).startsWith("application/json");
            assertThat(r.body()).isEqualTo(expected);
        }
    }

    @Test
    void agreesWithTheTokenCountsOfQueryByHash() {
        String body = "{\"block_hashes\":" + hashes + ",\"model_name\":\"m\",\"tenant_id\":\"t\"}";
        var instances = http.post("/query_by_hash", body).json().path("instances");
        // worker 1: device 2 blocks, +1 host, +1 disk, +1 external; /query_by_hash folds external into disk
        assertThat(instances.at("/1/gpu").asInt()).isEqualTo(2 * B);
        assertThat(instances.at("/1/cpu").asInt()).isEqualTo(3 * B);
        assertThat(instances.at("/1/disk").asInt()).isEqualTo(5 * B);
        assertThat(instances.at("/18446744073709551615/disk").asInt()).isEqualTo(2 * B);
    }

    @Test
    void anEmptyQueryListsEveryTierEmpty() {
        HttpTestClient.Response r = http.post(
                "/query_tiered_by_hash", "{\"block_hashes\":[],\"model_name\":\"m\",\"routing_group\":\"t\"}");
        assertThat(r.body())
                .isEqualTo("{\"block_size\":4,\"tiered\":{\"device\":{\"scores\":[],\"frequencies\":[]},"
                        + "\"lower_tier\":[[\"host_pinned\",{\"hits\":[]}],[\"disk\",{\"hits\":[]}],"
                        + "[\"external\",{\"hits\":[]}]]},\"instances\":{}}");
    }

    @Test
    void badRequestsAreRefusedLikeQueryByHash() {
        HttpTestClient.Response unknown = http.post(
                "/query_tiered_by_hash", "{\"block_hashes\":[1],\"model_name\":\"nope\",\"routing_group\":\"t\"}");
        unknown.assertStatus(404);
        assertThat(unknown.error()).isEqualTo("no indexer for model=nope tenant=t");
        HttpTestClient.Response missing = http.post("/query_tiered_by_hash", "{\"model_name\":\"m\"}");
        missing.assertStatus(422);
        assertThat(missing.error()).isEqualTo("missing field `block_hashes`");
        http.get("/query_tiered_by_hash").assertStatus(405);
    }
}
