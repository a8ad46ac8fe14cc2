package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.sim.EngineEventEncoder;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Engine simulator → ZMQ → indexer → {@code /query}: real sockets end to end, for every event encoding the
 * simulator speaks, with the worked examples of compatibility.md, HTTP API checked byte for byte.
 */
class QueryEndToEndTest {

    @RegisterExtension
    final RunningIndexer indexer = new RunningIndexer();

    private final List<EngineSimulator> sims = new ArrayList<>();

    private HttpTestClient http() {
        return indexer.http();
    }

    @AfterEach
    void stop() {
        sims.forEach(EngineSimulator::close); // before the indexer closes (RunningIndexer closes it after this)
    }

    private EngineSimulator engine(EngineSimulator.Options options, long instanceId, String model, int blockSize) {
        EngineSimulator sim = EngineSimulator.start(options);
        sims.add(sim);
        HttpTestClient.Response r = http().post(
                        "/register",
                        "{\"instance_id\":" + instanceId + ",\"endpoint\":\""
                                + sim.endpoint() + "\",\"replay_endpoint\":\"" + sim.replayEndpoint()
                                + "\",\"model_name\":\"" + model
                                + "\",\"block_size\":" + blockSize + ",\"dp_rank\":" + options.dpRank() + "}");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
        await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1);
        return sim;
    }

    private static int[] range(int fromInclusive, int toInclusive) {
        return IntStream.rangeClosed(fromInclusive, toInclusive).toArray();
    }

    private static String tokens(int[] t) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < t.length; i++) {
            sb.append(i == 0 ? "" : ",").append(t[i]);
        }
        return sb.append(']').toString();
    }

    private String queryBody(String model, int[] t) {
        return http().post("/query", "{\"model_name\":\"" + model + "\",\"token_ids\":" + tokens(t) + "}")
                .body();
    }

    @ParameterizedTest
    @EnumSource(value = EngineEventEncoder.Format.class)
    void workedExampleOfSpec56ForEveryEncoding(EngineEventEncoder.Format format) throws Exception {
        EngineSimulator sim =
                engine(EngineSimulator.Options.builder().format(format).build(), 1, "llama", 16);
        sim.storeSequence(range(1, 32), 16).get(30, TimeUnit.SECONDS);

        String expected = "{\"scores\":{\"1\":{\"0\":32}},\"frequencies\":[],\"instances\":{\"1\":{"
                + "\"longest_matched\":32,\"gpu\":32,\"dp\":{\"0\":32},\"cpu\":32,\"disk\":32,\"exact\":true}}}";
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(
                        () -> assertThat(queryBody("llama", range(1, 40))).isEqualTo(expected));
        // fewer tokens than a block: the empty answer
        assertThat(queryBody("llama", range(1, 15))).isEqualTo("{\"scores\":{},\"frequencies\":[],\"instances\":{}}");

        if (format == EngineEventEncoder.Format.ARRAY6) {
            return; // vLLM v0.9.0's 6-element events carry no medium: everything is device
        }
        // block 3 on the host-pinned tier, chained to block 2's engine hash
        long[] hashes = EngineSimulator.sequenceHashes(range(1, 48), 16, null);
        sim.publish(EngineSimulator.stored(new long[] {hashes[2]}, hashes[1], range(33, 48), 16, "CPU_PINNED", null))
                .get(30, TimeUnit.SECONDS);
        String tiered = "{\"scores\":{\"1\":{\"0\":32}},\"frequencies\":[],\"instances\":{\"1\":{"
                + "\"longest_matched\":48,\"gpu\":32,\"dp\":{\"0\":32},\"cpu\":48,\"disk\":48,\"exact\":true}}}";
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(
                        () -> assertThat(queryBody("llama", range(1, 48))).isEqualTo(tiered));
    }

    @Test
    void queryByHashUsesLocalHashesOfTheSpecVectors() throws Exception {
        EngineSimulator sim = engine(EngineSimulator.Options.defaults(), 1, "llama", 16);
        sim.storeSequence(range(1, 32), 16).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(http().post(
                                        "/query",
                                        "{\"model_name\":\"llama\",\"token_ids\":" + tokens(range(1, 32)) + "}")
                                .json()
                                .at("/scores/1/0")
                                .asInt())
                        .isEqualTo(32));

        // V1 as i64 (Dynamo's form) and V2
        HttpTestClient.Response signed = http().post(
                        "/query_by_hash",
                        "{\"model_name\":\"llama\",\"block_hashes\":[-1583300653928780152,2287610619914608821]}");
        signed.assertStatus(200);
        assertThat(signed.body())
                .isEqualTo(
                        "{\"scores\":{\"1\":{\"0\":32}},\"frequencies\":[],\"instances\":{\"1\":{"
                                + "\"longest_matched\":32,\"gpu\":32,\"dp\":{\"0\":32},\"cpu\":32,\"disk\":32,\"exact\":true}}}");
        // V1 unsigned, as /dump prints it; only the first block
        HttpTestClient.Response unsigned =
                http().post("/query_by_hash", "{\"model_name\":\"llama\",\"block_hashes\":[16863443419780771464]}");
        assertThat(unsigned.json().at("/scores/1/0").asInt()).isEqualTo(16);
        // a chain that does not start at the root matches nothing
        assertThat(http().post("/query_by_hash", "{\"model_name\":\"llama\",\"block_hashes\":[2287610619914608821]}")
                        .body())
                .isEqualTo("{\"scores\":{},\"frequencies\":[],\"instances\":{}}");
    }

    /**
     * Dynamo's DP-rank caveat (compatibility.md, HTTP API): a batch's {@code data_parallel_rank} overrides the
     * registered rank, and a rank only batches name is no registration: {@code /unregister} of that rank finds
     * nothing, of another registered rank leaves its blocks, and of the instance's last rank removes them with it.
     */
    @Test
    void aRankOnlyBatchesNameGoesWithTheInstanceNotWithARankUnregister() throws Exception {
        EngineSimulator sim = engine(EngineSimulator.Options.defaults(), 1, "m", 4);
        http().post("/register", """
                {"instance_id":1,"dp_rank":1,"endpoint":"tcp://127.0.0.1:1","model_name":"m","block_size":4}""").assertStatus(201);
        http().post("/register", """
                {"instance_id":2,"endpoint":"tcp://127.0.0.1:1","model_name":"m","block_size":4}""").assertStatus(201); // keeps the index
        int[] prompt = range(1, 8);
        long[] hashes = EngineSimulator.sequenceHashes(prompt, 4, null);
        sim.publishWithRank(3, List.of(EngineSimulator.stored(hashes, null, prompt, 4, null, null)))
                .get(30, TimeUnit.SECONDS);
        String heldByRank3 = "{\"1\":{\"3\":8}}";
        await().atMost(Duration.ofSeconds(30)).until(() -> scores(prompt).equals(heldByRank3));

        HttpTestClient.Response rank3 = http().post("/unregister", """
                {"instance_id":1,"model_name":"m","tenant_id":"default","dp_rank":3}""");
        rank3.assertStatus(404);
        assertThat(rank3.error()).isEqualTo("instance 1 dp_rank 3 not found");
        http().post("/unregister", """
                {"instance_id":1,"model_name":"m","tenant_id":"default","dp_rank":0}""").assertStatus(200);
        assertThat(scores(prompt)).as("rank 0's unregister keeps rank 3").isEqualTo(heldByRank3);

        http().post("/unregister", """
                {"instance_id":1,"model_name":"m","tenant_id":"default","dp_rank":1}""").assertStatus(200);
        assertThat(scores(prompt))
                .as("the last rank's unregister takes rank 3 too")
                .isEqualTo("{}");
    }

    private String scores(int[] prompt) {
        return http().post("/query", "{\"model_name\":\"m\",\"token_ids\":" + tokens(prompt) + "}")
                .json()
                .path("scores")
                .toString();
    }

    @Test
    void twoWorkersTwoRanksAndIsolationByModel() throws Exception {
        EngineSimulator a = engine(EngineSimulator.Options.defaults(), 1, "m", 4);
        EngineSimulator b = engine(EngineSimulator.Options.builder().dpRank(1).build(), 2, "m", 4);
        EngineSimulator other = engine(EngineSimulator.Options.defaults(), 3, "other", 4);
        a.storeSequence(range(1, 12), 4).get(30, TimeUnit.SECONDS);
        b.storeSequence(range(1, 8), 4).get(30, TimeUnit.SECONDS);
        other.storeSequence(range(1, 12), 4).get(30, TimeUnit.SECONDS);

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            JsonNode r = http().post("/query", "{\"model_name\":\"m\",\"token_ids\":" + tokens(range(1, 16)) + "}")
                    .json();
            assertThat(r.at("/scores/1/0").asInt()).isEqualTo(12);
            assertThat(r.at("/scores/2/1").asInt()).isEqualTo(8);
            assertThat(r.path("scores").has("3")).isFalse();
            assertThat(r.at("/instances/2/dp/1").asInt()).isEqualTo(8);
        });
        // /workers shows them active once the gate is open and they were heard from
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(
                                http().get("/workers?model_name=m").json().findValuesAsText("status"))
                        .containsOnly("active"));

        // removing a block on the engine removes it from the index
        long[] hashes = EngineSimulator.sequenceHashes(range(1, 12), 4, null);
        a.publish(EngineSimulator.removed(new long[] {hashes[2]}, "GPU")).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(() -> assertThat(http().post(
                                        "/query", "{\"model_name\":\"m\",\"token_ids\":" + tokens(range(1, 16)) + "}")
                                .json()
                                .at("/scores/1/0")
                                .asInt())
                        .isEqualTo(8));

        // unregistering drops the worker's blocks
        http().post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}").assertStatus(200);
        JsonNode after = http().post("/query", "{\"model_name\":\"m\",\"token_ids\":" + tokens(range(1, 16)) + "}")
                .json();
        assertThat(after.path("scores").has("1")).isFalse();
        assertThat(after.at("/scores/2/1").asInt()).isEqualTo(8);
    }

    @Test
    void gapIsReplayedThroughTheRouter() throws Exception {
        EngineSimulator sim = engine(EngineSimulator.Options.defaults(), 1, "m", 4);
        sim.storeSequence(range(1, 4), 4).get(30, TimeUnit.SECONDS);
        sim.dropLive(2); // buffered for replay, never sent live
        sim.storeSequence(range(101, 104), 4).get(30, TimeUnit.SECONDS);
        sim.storeSequence(range(201, 204), 4).get(30, TimeUnit.SECONDS);
        sim.storeSequence(range(301, 304), 4).get(30, TimeUnit.SECONDS); // reveals the gap
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            for (int start : new int[] {1, 101, 201, 301}) {
                assertThat(http().post(
                                        "/query",
                                        "{\"model_name\":\"m\",\"token_ids\":" + tokens(range(start, start + 3)) + "}")
                                .json()
                                .at("/scores/1/0")
                                .asInt())
                        .as("start %d", start)
                        .isEqualTo(4);
            }
        });
        assertThat(sim.replays().requests()).isGreaterThanOrEqualTo(1);
    }

    @Test
    void ingestMetricsMove() throws Exception {
        EngineSimulator sim = engine(EngineSimulator.Options.defaults(), 1, "m", 4);
        sim.storeSequence(range(1, 8), 4).get(30, TimeUnit.SECONDS);
        sim.publishPayload(new byte[] {(byte) 0xc1}).get(30, TimeUnit.SECONDS); // not msgpack
        sim.storeSequence(range(11, 18), 4).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            String text = http().get("/metrics").body();
            var m = io.kvindexer.indexer.metrics.MetricsEndpointTest.parse(text);
            assertThat(m.get("dynamo_kvrouter_kv_cache_events_applied{event_type=\"stored\",status=\"ok\"}"))
                    .isEqualTo(2.0);
            // a series not exposed yet is a failed assertion, retried, not an exception that ends the wait
            assertThat(m.get("dynamo_kvindexer_decode_errors_total{kind=\"not_msgpack\"}"))
                    .as("decode errors, not msgpack")
                    .isNotNull()
                    .isGreaterThanOrEqualTo(1.0);
            assertThat(m.get("dynamo_kvindexer_index_blocks{model=\"m\",tenant=\"default\"}"))
                    .isEqualTo(4.0);
            assertThat(m.get("dynamo_kvindexer_batches_applied_total"))
                    .isNotNull()
                    .isGreaterThanOrEqualTo(2.0);
        });
    }
}
