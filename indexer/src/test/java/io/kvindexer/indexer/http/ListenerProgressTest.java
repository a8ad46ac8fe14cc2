package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@code /workers} shows how far each stream has come: no {@code last_seq} while a connected engine has published
 * nothing (the sign of an engine that does not publish where it was registered), then the last seq applied and when.
 */
class ListenerProgressTest {

    /** Registers instance 1 of model m at {@code endpoint}. */
    private static void register(HttpTestClient http, String endpoint, int blockSize) {
        http.post(
                        "/register",
                        "{\"instance_id\":1,\"endpoint\":\"" + endpoint + "\",\"model_name\":\"m\",\"block_size\":"
                                + blockSize + "}")
                .assertStatus(201);
    }

    private static JsonNode listener(HttpTestClient http) {
        return http.get("/workers").json().get(0).get("listeners").get("0");
    }

    @Test
    void aConnectedEngineThatNeverPublishedHasNoLastSeqThenItsLastBatchIsShown() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl());
                EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            register(http, sim.endpoint(), 4);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> listener(http).get("connected").asBoolean());
            JsonNode quiet = listener(http);
            assertThat(quiet.has("last_seq")).as(quiet.toString()).isFalse();
            assertThat(quiet.has("last_batch_ms")).isFalse();

            long before = System.currentTimeMillis();
            sim.storeSequence(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4).get();
            sim.storeSequence(new int[] {9, 10, 11, 12}, 4).get();
            long lastSeq = sim.nextSeq() - 1;
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> listener(http).path("last_seq").asLong(-1) == lastSeq);
            JsonNode busy = listener(http);
            assertThat(busy.get("last_batch_ms").asLong()).isBetween(before, System.currentTimeMillis());
        }
    }

    /** The classic mistake: the engine's replay ROUTER registered as its PUB. Not connected, and /workers says why. */
    @Test
    void anEngineRegisteredAtItsReplayPortShowsWhyItIsNotConnected() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl());
                EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            register(http, sim.replayEndpoint(), 4);
            await().atMost(Duration.ofSeconds(30)).until(() -> listener(http).has("connect_error"));
            JsonNode l = listener(http);
            assertThat(l.get("connected").asBoolean()).isFalse();
            assertThat(l.get("status").asText())
                    .as("pending until a first connection")
                    .isEqualTo("pending");
            assertThat(l.get("connect_error").asText()).contains("ROUTER");
            assertThat(l.has("last_error"))
                    .as("Dynamo's field keeps its meaning")
                    .isFalse();
        }
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            register(http, "tcp://127.0.0.1:1", 4);
            await().atMost(Duration.ofSeconds(30)).until(() -> listener(http).has("connect_error"));
            assertThat(listener(http).get("connect_error").asText()).containsIgnoringCase("refused");
        }
    }

    /**
     * An engine registered with another block size than it stores: the index refuses its stores, and the listener says
     * why, both sizes named, instead of staying exact while nothing of the engine is indexed.
     */
    @Test
    void anEngineRegisteredWithAnotherBlockSizeIsDegradedSayingBothSizes() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl());
                EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            register(http, sim.endpoint(), 16);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> listener(http).get("connected").asBoolean());
            assertThat(listener(http).get("exactness").asText()).isEqualTo("exact");
            sim.storeSequence(IntStream.rangeClosed(1, 16).toArray(), 4).get();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> listener(http).get("exactness").asText().equals("degraded"));
            assertThat(listener(http).get("exactness_reason").asText())
                    .startsWith("block size mismatch: the engine stores blocks of 4 tokens, this index of 16");
            assertThat(http.post(
                                    "/query",
                                    "{\"model_name\":\"m\",\"token_ids\":["
                                            + String.join(
                                                    ",",
                                                    IntStream.rangeClosed(1, 16)
                                                            .mapToObj(Integer::toString)
                                                            .toList())
                                            + "]}")
                            .json()
                            .get("scores")
                            .size())
                    .as("nothing of the engine was indexed")
                    .isZero();
        }
    }

    /**
     * vLLM queues the {@code AllBlocksCleared} of a prefix-cache reset and publishes it with the next step's stores, in
     * one batch. A store of another block size after the clear is refused like any other, so the listener stays
     * degraded: the clear vouches for what came before it in the batch, not after.
     */
    @Test
    void aStoreOfAnotherBlockSizeAfterAClearInTheSameBatchKeepsTheListenerDegraded() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl());
                EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            register(http, sim.endpoint(), 16);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> listener(http).get("connected").asBoolean()
                            && listener(http).get("exactness").asText().equals("exact"));
            int[] tokens = IntStream.rangeClosed(1, 8).toArray();
            sim.publish(
                            EngineSimulator.cleared(),
                            EngineSimulator.stored(new long[] {0xb16L}, null, tokens, 8, "GPU", null))
                    .get();
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> listener(http).path("last_seq").asLong(-1) == 0);
            assertThat(listener(http).get("exactness").asText()).isEqualTo("degraded");
            assertThat(listener(http).get("exactness_reason").asText())
                    .startsWith("block size mismatch: the engine stores blocks of 8 tokens, this index of 16");
        }
    }

    /**
     * vLLM publishes a hybrid model's partial prefix-cache entries (PR #45939) as one-hash stores of the hash-block
     * width, below the engine's block size: not indexable, but no sign of a wrong registration once the engine's full
     * blocks come at the index's size. The listener stays exact (it was degraded, advising a registration with the
     * sub-block width); a store of another full size still degrades it.
     */
    @Test
    void partialPrefixCacheEntriesOfAnEngineWhoseBlocksAreIndexedLeaveItExact() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl());
                EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            register(http, sim.endpoint(), 4);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> listener(http).get("connected").asBoolean()
                            && listener(http).get("exactness").asText().equals("exact"));
            int[] full = IntStream.rangeClosed(1, 8).toArray();
            sim.storeSequence(full, 4).get(); // seq 0: two full blocks of 4
            long[] hashes = EngineSimulator.sequenceHashes(full, 4, null);
            sim.publish(EngineSimulator.stored(new long[] {0x5eedL}, hashes[1], new int[] {9, 10}, 2, "GPU", null))
                    .get(); // seq 1: a partial entry of 2 tokens after them
            sim.storeSequence(IntStream.rangeClosed(101, 104).toArray(), 4).get(); // seq 2
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> listener(http).path("last_seq").asLong(-1) == 2);
            assertThat(listener(http).get("exactness").asText()).isEqualTo("exact");

            sim.publish(EngineSimulator.stored(
                            new long[] {0xb16L},
                            null,
                            IntStream.rangeClosed(201, 208).toArray(),
                            8,
                            "GPU",
                            null))
                    .get(); // seq 3: a full block of 8
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> listener(http).get("exactness").asText().equals("degraded"));
            assertThat(listener(http).get("exactness_reason").asText())
                    .startsWith("block size mismatch: the engine stores blocks of 8 tokens, this index of 4");
        }
    }
}
