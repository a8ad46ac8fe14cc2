package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.registry.WorkerEntry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code /health}, {@code /ready} and the DYN_ROUTER_MIN_INITIAL_WORKERS gate (compatibility.md, Startup, recovery and readiness, compatibility.md, Where we differ on purpose). */
class ReadinessTest {

    private static String reg(int id) {
        return "{\"instance_id\":" + id + ",\"endpoint\":\"tcp://127.0.0.1:1\",\"model_name\":\"m\",\"block_size\":4}";
    }

    /** Run by {@link RoutesTest} (both ways), as is {@link Gate}. */
    @IndexerRoutes
    abstract static class Ready {

        @Test
        void readyAtOnceWithoutPeersOrGate(HttpTestClient http) {
            HttpTestClient.Response health = http.get("/health");
            health.assertStatus(200);
            assertThat(health.body()).isEmpty();
            HttpTestClient.Response ready = http.get("/ready");
            ready.assertStatus(200);
            assertThat(ready.body()).isEqualTo("{\"ready\":true,\"reason\":\"ready\"}");
        }
    }

    @IndexerRoutes
    abstract static class Gate {

        @IndexerRoutes.Config
        static IndexerConfig config() {
            return IndexerConfig.defaults().with(c -> c.minInitialWorkers = 2);
        }

        @Test
        void gateWaitsForMinInitialWorkersRegisteredOverHttp(HttpTestClient http, IndexerRouting.Components app) {
            // run_common_exposes_ready_while_waiting_for_min_workers, with compatibility.md, Where we differ on
            // purpose: HTTP is open while waiting
            http.get("/health").assertStatus(200);
            HttpTestClient.Response ready = http.get("/ready");
            ready.assertStatus(503);
            assertThat(ready.body()).isEqualTo("{\"ready\":false,\"reason\":\"waiting_for_min_initial_workers\"}");

            http.post("/register", reg(1)).assertStatus(201);
            HttpTestClient.Response early = http.post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"m\"}");
            early.assertStatus(503);
            assertThat(early.error()).contains("waiting_for_min_initial_workers");
            assertThat(app.gate().isOpen()).isFalse();

            // two ranks of one instance are still one instance
            http.post("/register", """
                    {"instance_id":1,"dp_rank":1,"endpoint":"tcp://127.0.0.1:2","model_name":"m","block_size":4}""").assertStatus(201);
            assertThat(app.gate().isOpen()).isFalse();

            http.post("/register", reg(2)).assertStatus(201);
            assertThat(app.gate().isOpen()).isTrue();
            assertThat(http.get("/ready").json().get("reason").asText()).isIn("ready", "listeners_pending");
            http.post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"m\"}")
                    .assertStatus(200);
        }
    }

    @Test
    void workersFromFlagsCountTowardTheGate() throws Exception {
        IndexerConfig cfg = IndexerConfig.defaults().with(c -> {
            c.minInitialWorkers = 2;
            c.blockSize = 4;
            c.workers = List.of(new WorkerEntry(1, 0, "tcp://127.0.0.1:1"), new WorkerEntry(2, 0, "tcp://127.0.0.1:2"));
        });
        try (IndexerApp app = IndexerApp.start(cfg)) {
            assertThat(app.gate().isOpen()).isTrue();
        }
    }

    @Test
    void recoveringFromPeerIsTheFirstReason() throws Exception {
        // a peer that accepts the connection but never answers would keep us recovering for the timeout; an
        // unreachable one ends recovery quickly: observe the reason during the configured pre-delay instead
        IndexerConfig cfg = IndexerConfig.defaults().with(c -> {
            c.peers = List.of("http://127.0.0.1:9");
            c.recoveryDelay = Duration.ofSeconds(3);
        });
        try (IndexerApp app = IndexerApp.start(cfg);
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            HttpTestClient.Response ready = http.get("/ready");
            ready.assertStatus(503);
            assertThat(ready.body()).isEqualTo("{\"ready\":false,\"reason\":\"recovering_from_peer\"}");
            http.post("/query", "{\"token_ids\":[1],\"model_name\":\"m\"}").assertStatus(503);
            // no reachable peer: empty start, then ready
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> http.get("/ready").status() == 200);
            assertThat(http.get("/peers").json().get(0).asText()).isEqualTo("http://127.0.0.1:9");
        }
    }
}
