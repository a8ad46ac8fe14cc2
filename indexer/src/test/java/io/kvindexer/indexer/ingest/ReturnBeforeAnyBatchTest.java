package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A listener joins an engine that has published nothing (its join asks, gets nothing, and is exact). The engine
 * process then restarts on the same ports and publishes before the listener's SUB is back (a PUB sends to no one
 * meanwhile), then goes quiet. Before, a reconnect with nothing applied yet asked the engine nothing ("a join finds
 * out by itself"), and with no later batch to show a gap the listener stayed exact while the index held none of the
 * engine's blocks (found by {@code RandomFaultTest}, seed 12). Now every reconnect of a listener with a replay
 * endpoint catches up, from seq 0 when nothing was applied.
 */
class ReturnBeforeAnyBatchTest {

    @RegisterExtension
    final TestResources open = new TestResources();

    private static Set<Long> claimed(HttpTestClient http) {
        Set<Long> out = new HashSet<>();
        http.get("/dump")
                .json()
                .properties()
                .forEach(model -> model.getValue()
                        .path("events")
                        .forEach(ev -> ev.at("/event/data/stored/blocks")
                                .forEach(b -> out.add(
                                        b.get("block_hash").bigIntegerValue().longValue()))));
        return out;
    }

    @Test
    void batchesPublishedWhileTheConnectionWasDownAreCaughtUpThoughNoneWasAppliedBefore() throws Exception {
        int pub;
        int replay;
        try (ServerSocket a = new ServerSocket(0);
                ServerSocket b = new ServerSocket(0)) {
            pub = a.getLocalPort();
            replay = b.getLocalPort();
        }
        EngineSimulator.Options options = EngineSimulator.Options.builder()
                .endpoint("tcp://127.0.0.1:" + pub)
                .replayEndpoint("tcp://127.0.0.1:" + replay)
                .build();
        EngineSimulator first = EngineSimulator.start(options);
        IndexerApp app = open.add(IndexerApp.start(IndexerConfig.defaults()));
        HttpTestClient http = open.add(new HttpTestClient(app.baseUrl()));
        http.post(
                        "/register",
                        "{\"instance_id\":1,\"endpoint\":\"" + first.endpoint() + "\",\"replay_endpoint\":\""
                                + first.replayEndpoint() + "\",\"model_name\":\"m\",\"block_size\":4}")
                .assertStatus(201);
        // the join asks the empty engine for its buffer, gets nothing, and is exact
        await().atMost(Duration.ofSeconds(60))
                .until(() -> first.replays().requests() >= 1
                        && http.get("/workers")
                                .json()
                                .at("/0/listeners/0/exactness")
                                .asText()
                                .equals("exact"));
        first.close();
        await().atMost(Duration.ofSeconds(60))
                .until(() -> !http.get("/workers")
                        .json()
                        .at("/0/listeners/0/connected")
                        .asBoolean());
        EngineSimulator second = open.add(EngineSimulator.start(options));
        second.storeSequence(IntStream.range(0, 12).toArray(), 4).get(30, TimeUnit.SECONDS);
        second.storeSequence(IntStream.range(100, 112).toArray(), 4).get(30, TimeUnit.SECONDS);
        // (sent to no subscriber: the listener's SUB was not back yet)
        Assumptions.assumeTrue(second.subscriptions() == 0, "the listener reconnected before the engine published");
        Set<Long> held = second.held(0, StorageTier.DEVICE);
        assertThat(held).hasSize(6);
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(claimed(http)).isEqualTo(held));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> http.get("/workers")
                        .json()
                        .at("/0/listeners/0/exactness")
                        .asText()
                        .equals("exact"));
    }
}
