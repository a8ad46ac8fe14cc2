package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.sim.EngineEventEncoder.Format;
import io.kvindexer.indexer.sim.EngineEventEncoder.HashMode;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SGLang with EAGLE speculative decoding → ZMQ → indexer → {@code /query}, real sockets end to end: its stores (one
 * {@code BlockStored} of bigram pairs per page) match a query that asks for EAGLE windows ({@code "is_eagle": true},
 * compatibility.md, "Where we differ on purpose") and, as with Dynamo's {@code /query}, no other; a vLLM engine's
 * plain blocks of the same tokens the other way round.
 */
class EagleQueryEndToEndTest {

    private static final int B = 16;

    @RegisterExtension
    final RunningIndexer indexer = new RunningIndexer();

    private final List<EngineSimulator> sims = new ArrayList<>();

    @AfterEach
    void stop() {
        sims.forEach(EngineSimulator::close); // before the indexer closes (RunningIndexer closes it after this)
    }

    private EngineSimulator engine(EngineSimulator.Options options, long instanceId) {
        EngineSimulator sim = EngineSimulator.start(options);
        sims.add(sim);
        indexer.http()
                .post(
                        "/register",
                        "{\"instance_id\":" + instanceId + ",\"endpoint\":\"" + sim.endpoint()
                                + "\",\"model_name\":\"m\",\"block_size\":" + B + "}")
                .assertStatus(201);
        await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1);
        return sim;
    }

    private static int[] range(int fromInclusive, int toInclusive) {
        return IntStream.rangeClosed(fromInclusive, toInclusive).toArray();
    }

    /** The answer to a JSON {@code /query} of {@code tokens}, with {@code extra} fields after them. */
    private String query(int[] tokens, String extra) {
        String ids = IntStream.of(tokens).mapToObj(Integer::toString).collect(Collectors.joining(","));
        HttpTestClient.Response r =
                indexer.http().post("/query", "{\"model_name\":\"m\",\"token_ids\":[" + ids + "]" + extra + "}");
        r.assertStatus(200);
        return r.body();
    }

    private static String held(long instance, int tokens) {
        return "{\"scores\":{\"" + instance + "\":{\"0\":" + tokens + "}},\"frequencies\":[],\"instances\":{\""
                + instance + "\":{\"longest_matched\":" + tokens + ",\"gpu\":" + tokens + ",\"dp\":{\"0\":" + tokens
                + "},\"cpu\":" + tokens + ",\"disk\":" + tokens + ",\"exact\":true}}}";
    }

    @Test
    void anEagleQueryMatchesSglangsEagleBlocksAndAPlainQueryMatchesThePlainOnes() throws Exception {
        EngineSimulator sglang = engine(
                EngineSimulator.Options.builder()
                        .format(Format.SGLANG7)
                        .hashMode(HashMode.I64)
                        .build(),
                1);
        EngineSimulator vllm = engine(EngineSimulator.Options.defaults(), 2);
        // a 40-token prompt: SGLang's bigram keys fill floor(39 / 16) = 2 pages, windows 1..17 and 17..33
        sglang.storeEagleSequence(range(1, 40), B, "GPU").get(30, TimeUnit.SECONDS);
        vllm.storeSequence(range(1, 40), B).get(30, TimeUnit.SECONDS);

        String eagle = ",\"is_eagle\":true";
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(query(range(1, 40), eagle)).isEqualTo(held(1, 32));
            assertThat(query(range(1, 40), "")).isEqualTo(held(2, 32));
        });
        // false and null are the default: Dynamo's answer, which never matches an EAGLE block
        assertThat(query(range(1, 40), ",\"is_eagle\":false")).isEqualTo(held(2, 32));
        assertThat(query(range(1, 40), ",\"is_eagle\":null")).isEqualTo(held(2, 32));
        // n tokens hold floor((n - 1) / B) EAGLE windows, each counted as B matched tokens
        assertThat(query(range(1, 33), eagle)).isEqualTo(held(1, 32));
        assertThat(query(range(1, 32), eagle)).isEqualTo(held(1, 16));
        assertThat(query(range(1, 16), eagle)).isEqualTo("{\"scores\":{},\"frequencies\":[],\"instances\":{}}");
    }
}
