package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Three replicas (real servers on real sockets) follow three engines that keep storing and evicting; each replica in
 * turn is stopped and started again with the other two as peers. Nobody registers anything on a restarted replica:
 * at its first {@code /ready} 200 its {@code /workers} already lists every engine (registrations travel with the
 * tree), and afterwards its {@code /dump} follows the engines, batches lost live after the restart included, which
 * only the replay endpoint it learned from its peer can give back.
 */
class RollingRestartTest {

    private static final int ENGINES = 3;

    @Test
    void aRestartedReplicaIsReadyWithEveryEngineAndFollowsThemWithoutAnyRegistration() throws Exception {
        List<IndexerApp> replicas = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> load = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                replicas.add(IndexerApp.start(IndexerConfig.defaults()));
            }
            try (FaultHarness h = new FaultHarness(replicas.getFirst().baseUrl())) {
                for (int id = 1; id <= ENGINES; id++) {
                    FaultHarness.Engine e = h.addEngine(id, EngineSimulator.Options.defaults(), 300, true);
                    for (IndexerApp r : replicas.subList(1, 3)) {
                        try (HttpTestClient http = new HttpTestClient(r.baseUrl())) {
                            e.register(http);
                        }
                    }
                    await().atMost(Duration.ofSeconds(60)).until(() -> e.sim.subscriptions() >= 3);
                }
                load.addAll(h.driveInBackground(stop));
                Map<String, String> expectedWorkers = workers(h.http);
                assertThat(expectedWorkers).hasSize(ENGINES);

                for (int i = 0; i < replicas.size(); i++) {
                    List<String> peers = new ArrayList<>();
                    for (int j = 0; j < replicas.size(); j++) {
                        if (j != i) {
                            peers.add(replicas.get(j).baseUrl());
                        }
                    }
                    replicas.get(i).close();
                    IndexerApp restarted =
                            IndexerApp.start(IndexerConfig.defaults().with(c -> {
                                c.peers = peers;
                                c.recoveryDelay = Duration.ofMillis(200);
                            }));
                    replicas.set(i, restarted);
                    try (HttpTestClient http = new HttpTestClient(restarted.baseUrl())) {
                        await().atMost(Duration.ofSeconds(60))
                                .pollInterval(Duration.ofMillis(5))
                                .until(() -> http.get("/ready").status() == 200);
                        // the first moment it is Ready: every engine is registered, with its endpoints
                        assertThat(workers(http))
                                .as("replica %d at its first /ready 200", i)
                                .isEqualTo(expectedWorkers);
                    }
                }
                stop.set(true);
                for (Thread t : load) {
                    t.join();
                }
                List<Long> replayedBefore = new ArrayList<>();
                for (IndexerApp r : replicas) {
                    replayedBefore.add(metric(r, "dynamo_kvindexer_replayed_batches_total"));
                }
                for (FaultHarness.Engine e : h.engines) {
                    e.dropBurst(4); // lost live: only the replay endpoint gives them back
                    e.liveProbe();
                }
                for (int i = 0; i < replicas.size(); i++) {
                    IndexerApp r = replicas.get(i);
                    try (HttpTestClient http = new HttpTestClient(r.baseUrl())) {
                        await().atMost(Duration.ofSeconds(60))
                                .pollInterval(Duration.ofMillis(100))
                                .untilAsserted(() -> assertThat(FaultHarness.dumpMemberships(http))
                                        .isEqualTo(h.groundTruth()));
                        assertThat(workers(http)).isEqualTo(expectedWorkers);
                    }
                    assertThat(metric(r, "dynamo_kvindexer_replayed_batches_total") - replayedBefore.get(i))
                            .as("replica %d replayed the lost batches", i)
                            .isGreaterThanOrEqualTo(4L * ENGINES);
                }
            }
        } finally {
            stop.set(true);
            for (Thread t : load) {
                t.join();
            }
            replicas.forEach(IndexerApp::close);
        }
    }

    /** Instance and rank → "endpoint replay endpoint" as {@code /workers} lists them, only active listeners. */
    private static Map<String, String> workers(HttpTestClient http) {
        Map<String, String> out = new TreeMap<>();
        for (JsonNode w : http.get("/workers").json()) {
            w.path("listeners")
                    .properties()
                    .forEach(l -> out.put(
                            w.path("instance_id").asText() + ":" + l.getKey(),
                            l.getValue().path("endpoint").asText() + " "
                                    + w.path("model_name").asText() + " "
                                    + w.path("block_size").asText()));
        }
        return out;
    }

    private static long metric(IndexerApp app, String name) {
        try (HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            long sum = 0;
            for (String line : http.get("/metrics").body().split("\n")) {
                if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                    sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                }
            }
            return sum;
        }
    }
}
