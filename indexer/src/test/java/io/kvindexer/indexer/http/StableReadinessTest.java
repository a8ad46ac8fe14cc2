package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Readiness means "answers queries from a complete index" (issue 13): once the startup gate is open, no listener
 * trouble turns {@code /ready} to 503 — it shows in the body, {@code /workers} and {@code /metrics} instead.
 */
class StableReadinessTest {

    private static String register(long id, String endpoint) {
        return "{\"instance_id\":" + id + ",\"endpoint\":\"" + endpoint + "\",\"model_name\":\"m\",\"block_size\":4}";
    }

    @Test
    void oneUnconnectableEngineKeepsTheReplicaReady() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults().with(c -> c.minInitialWorkers = 2));
                HttpTestClient http = new HttpTestClient(app.baseUrl());
                EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            http.post("/register", register(1, sim.endpoint())).assertStatus(201);
            http.post("/register", register(2, "tcp://*:5557")).assertStatus(201);
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> http.get("/workers?model_name=m")
                            .json()
                            .findValuesAsText("status")
                            .contains("failed"));
            await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1);

            for (int i = 0; i < 20; i++) {
                HttpTestClient.Response ready = http.get("/ready");
                assertThat(ready.status()).as("probe %d: %s", i, ready.body()).isEqualTo(200);
                assertThat(ready.json()
                                .get("listeners_failed")
                                .get(0)
                                .get("instance_id")
                                .asLong())
                        .isEqualTo(2);
                Thread.sleep(25);
            }
            sim.storeSequence(new int[] {1, 2, 3, 4}, 4).get(30, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> http.post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"m\"}")
                                    .json()
                                    .at("/scores/1/0")
                                    .asInt()
                            == 4);
            assertThat(http.get("/metrics").body()).contains("dynamo_kvindexer_listeners{status=\"failed\"} 1.0");
            http.get("/ready").assertStatus(200);
        }
    }

    @Test
    void registeringAfterStartupNeverFailsAProbe() throws Exception {
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults());
                HttpTestClient http = new HttpTestClient(app.baseUrl());
                HttpTestClient probe = new HttpTestClient(app.baseUrl())) {
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> http.get("/ready").status() == 200);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger probes = new AtomicInteger();
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            ConcurrentLinkedQueue<String> bodies = new ConcurrentLinkedQueue<>();
            Thread poller = Thread.ofPlatform().name("ready-probe").start(() -> {
                while (!stop.get()) {
                    try {
                        HttpTestClient.Response r = probe.get("/ready");
                        probes.incrementAndGet();
                        if (r.status() != 200) {
                            failures.add(r.status() + " " + r.body());
                        }
                        bodies.add(r.body());
                    } catch (RuntimeException e) { // a probe that cannot connect fails too
                        failures.add(e.toString());
                    }
                }
            });
            List<EngineSimulator> sims = new ArrayList<>();
            try {
                for (int i = 0; i < 24; i++) {
                    String endpoint;
                    if (i % 3 == 0) {
                        EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                        sims.add(sim);
                        endpoint = sim.endpoint();
                    } else if (i % 3 == 1) {
                        endpoint = "tcp://127.0.0.1:1"; // nothing listens: ZeroMQ keeps retrying in the background
                    } else {
                        endpoint = "tcp://*:" + (5000 + i); // the address an engine binds: fails for good
                    }
                    http.post("/register", register(100 + i, endpoint)).assertStatus(201);
                    if (i % 4 == 3) {
                        http.post("/unregister", "{\"instance_id\":" + (100 + i - 1) + ",\"model_name\":\"m\"}")
                                .assertStatus(200);
                    }
                }
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> http.get("/ready")
                                        .json()
                                        .path("listeners_failed")
                                        .size()
                                >= 5);
                // the probe, too, has seen the failed listeners (and still 200)
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> bodies.stream().anyMatch(b -> b.contains("\"listeners_failed\"")));
            } finally {
                stop.set(true);
                poller.join(60_000);
                sims.forEach(EngineSimulator::close);
            }
            assertThat(failures).as("probes that failed").isEmpty();
            assertThat(probes.get()).isGreaterThan(24);
            JsonNode last = http.get("/ready").json();
            assertThat(last.get("ready").asBoolean()).isTrue();
            assertThat(last.get("listeners_failed").findValuesAsText("endpoint"))
                    .allMatch(e -> e.startsWith("tcp://*:"));
        }
    }
}
