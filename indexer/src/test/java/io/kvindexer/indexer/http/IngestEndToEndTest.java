package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Ingestion faults seen through the HTTP API: a silent replay ROUTER shows in {@code last_error} and does not
 * stall the listener; a publisher restart drops the old blocks; Dynamo's pause → traffic → resume cycle ends
 * with the index equal to the engine's state (gap detection + replay).
 */
class IngestEndToEndTest {

    private IndexerApp app;
    private HttpTestClient http;
    private EngineSimulator sim;

    @BeforeEach
    void start() throws Exception {
        app = IndexerApp.start(IndexerConfig.defaults().with(c -> c.testEndpoints = true));
        http = new HttpTestClient(app.baseUrl());
        sim = EngineSimulator.start(EngineSimulator.Options.defaults());
        http.registerEngine(sim);
    }

    @AfterEach
    void stop() {
        sim.close();
        http.close();
        app.close();
    }

    private static int[] range(int from, int to) {
        return IntStream.rangeClosed(from, to).toArray();
    }

    private int score(int from, int to) {
        return http.post(
                        "/query",
                        "{\"model_name\":\"m\",\"token_ids\":"
                                + java.util.Arrays.toString(range(from, to)).replace(" ", "") + "}")
                .json()
                .at("/scores/1/0")
                .asInt();
    }

    @Test
    void silentReplayRouterShowsInLastErrorAndDoesNotStall() throws Exception {
        sim.storeSequence(range(1, 4), 4).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> score(1, 4) == 4);
        sim.silentReplay(true);
        sim.dropLive(1);
        sim.storeSequence(range(11, 14), 4).get(30, TimeUnit.SECONDS); // lost live, replay never answered
        sim.storeSequence(range(21, 24), 4).get(30, TimeUnit.SECONDS); // reveals the gap
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            JsonNode listener =
                    http.get("/workers").json().get(0).get("listeners").get("0");
            assertThat(listener.path("last_error").asText("")).isNotEmpty();
        });
        // live traffic goes on after the timed-out replay
        sim.silentReplay(false);
        sim.storeSequence(range(31, 34), 4).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(60)).until(() -> score(31, 34) == 4);
        assertThat(http.get("/metrics").body()).contains("dynamo_kvindexer_replays_total{result=\"timeout\"}");
    }

    @Test
    void publisherRestartDropsTheOldBlocks() throws Exception {
        sim.storeSequence(range(1, 8), 4).get(30, TimeUnit.SECONDS);
        sim.storeSequence(range(101, 104), 4).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> score(1, 8) == 8 && score(101, 104) == 4);
        sim.restart(); // new engine process: seq 0, empty cache
        sim.storeSequence(range(201, 204), 4).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> score(201, 204) == 4);
        assertThat(score(1, 8)).isZero();
        assertThat(score(101, 104)).isZero();
    }

    @Test
    void pauseTrafficResumeConvergesToTheEngine() throws Exception {
        // Dynamo's _zmq_replay_cycle
        sim.storeSequence(range(1, 8), 4).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> score(1, 8) == 8);
        http.post("/test/pause_listener", "{\"instance_id\":1}").assertStatus(200);
        for (int i = 0; i < 10; i++) {
            sim.storeSequence(range(1000 * (i + 1), 1000 * (i + 1) + 7), 4).get(30, TimeUnit.SECONDS);
        }
        long[] first = EngineSimulator.sequenceHashes(range(1, 8), 4, null);
        sim.publish(EngineSimulator.removed(new long[] {first[1]}, "GPU")).get(30, TimeUnit.SECONDS);
        int subscribed = sim.subscriptions();
        http.post("/test/resume_listener", "{\"instance_id\":1}").assertStatus(200);
        // the resumed listener subscribes anew; a batch sent before that would be lost like any slow join
        await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() > subscribed);
        sim.storeSequence(range(50_000, 50_003), 4).get(30, TimeUnit.SECONDS); // a live batch reveals the gap
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            for (int i = 0; i < 10; i++) {
                assertThat(score(1000 * (i + 1), 1000 * (i + 1) + 7))
                        .as("sequence %d", i)
                        .isEqualTo(8);
            }
            assertThat(score(1, 8)).isEqualTo(4);
            assertThat(score(50_000, 50_003)).isEqualTo(4);
        });
        // the index holds exactly what the engine holds
        JsonNode events = http.get("/dump").json().get("m:default").get("events");
        java.util.Set<Long> indexed = new java.util.HashSet<>();
        events.forEach(e -> indexed.add(e.get("event")
                .get("data")
                .get("stored")
                .get("blocks")
                .get(0)
                .get("block_hash")
                .bigIntegerValue()
                .longValue()));
        assertThat(indexed).isEqualTo(sim.held(0, io.kvindexer.indexer.common.StorageTier.DEVICE));
    }
}
