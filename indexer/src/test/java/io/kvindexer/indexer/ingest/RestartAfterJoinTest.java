package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A listener that joined an engine already running learns everything from its buffer (seqs 0..4 here) before any live
 * batch arrives. Then the engine restarts without its connection closing (a restart behind a forwarder, or one the
 * listener did not see), and its first batch, seq 0, comes live. Before, that first live message of the attempt was
 * measured against the watermark the attempt started from (none, for a join): seq 0 was taken for a late duplicate
 * of a replayed batch and skipped, and so were the new process's next four, while the old process's blocks stayed
 * {@code exact} (found by {@code RandomFaultTest}, seed 6). A duplicate of a batch at or below the watermark was
 * stamped no later than the watermark's batch; one stamped more than a second later is another process's.
 */
class RestartAfterJoinTest {

    private static final int BLOCK = 4;

    @RegisterExtension
    final TestResources open = new TestResources();

    private static int[] tokens(int batch) {
        return IntStream.range(batch * 1000, batch * 1000 + BLOCK * 3).toArray();
    }

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
    void aSeqThatWentBackAfterAJoinsReplayIsARestartNotADuplicate() throws Exception {
        EngineSimulator sim = open.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        for (int b = 0; b < 5; b++) {
            sim.storeSequence(tokens(b), BLOCK).get(30, TimeUnit.SECONDS); // seqs 0..4, before anyone listens
        }
        IndexerApp app = open.add(IndexerApp.start(IndexerConfig.defaults()));
        HttpTestClient http = open.add(new HttpTestClient(app.baseUrl()));
        http.post(
                        "/register",
                        "{\"instance_id\":1,\"endpoint\":\"" + sim.endpoint() + "\",\"replay_endpoint\":\""
                                + sim.replayEndpoint() + "\",\"model_name\":\"m\",\"block_size\":" + BLOCK + "}")
                .assertStatus(201);
        // the join asks the idle engine for its buffer: every block, exact, no live batch seen
        Set<Long> before = sim.held(0, StorageTier.DEVICE);
        await().atMost(Duration.ofSeconds(60)).until(() -> claimed(http).equals(before));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> http.get("/workers")
                        .json()
                        .at("/0/listeners/0/exactness")
                        .asText()
                        .equals("exact"));
        assertThat(http.get("/workers").json().at("/0/listeners/0/last_seq").asLong())
                .isEqualTo(4);

        // a restart takes longer than a second (a process starts, its model loads)
        Thread.sleep(1_500);
        sim.restart();
        sim.storeSequence(tokens(100), BLOCK).get(30, TimeUnit.SECONDS); // seq 0 of the new process, live
        Set<Long> after = sim.held(0, StorageTier.DEVICE);
        assertThat(after).hasSize(3);
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100))
                .untilAsserted(() -> assertThat(claimed(http)).isEqualTo(after));
        await().atMost(Duration.ofSeconds(60))
                .until(() -> http.get("/workers")
                        .json()
                        .at("/0/listeners/0/exactness")
                        .asText()
                        .equals("exact"));
        assertThat(http.get("/workers").json().at("/0/listeners/0/last_seq").asLong())
                .isZero();
    }
}
