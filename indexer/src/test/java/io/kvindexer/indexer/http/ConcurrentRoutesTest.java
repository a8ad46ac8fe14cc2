package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.webserver.testing.junit5.ServerTest;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.ServiceLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Registrations, unregistrations, queries, listings and dumps racing each other on real sockets: every answer is
 * one of the documented statuses (never a 5xx), nothing deadlocks, and the end state is consistent.
 */
@ServerTest
@IndexerRoutes
class ConcurrentRoutesTest {

    private static final Set<Integer> DOCUMENTED = Set.of(200, 201, 404, 409);
    private static final int THREADS = 6;

    /**
     * A dump slot for each thread: a /dump over --max-concurrent-dumps (4 by default) is a documented 503 with a
     * Retry-After (DumpSlotsTest), which six threads racing on a fast socket can reach.
     */
    @IndexerRoutes.Config
    static IndexerConfig config() {
        return IndexerConfig.defaults()
                .with(c -> c.limits = ServiceLimits.DEFAULTS.with(l -> l.maxConcurrentDumps = THREADS));
    }

    @Test
    void racingRequestsGetDocumentedAnswers(HttpTestClient http, IndexerRouting.Components app) throws Exception {
        Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            long seed = t;
            done.add(pool.submit(() -> {
                Random r = new Random(seed);
                for (int i = 0; i < 150; i++) {
                    int id = r.nextInt(8);
                    int rank = r.nextInt(2);
                    String model = "m" + r.nextInt(2);
                    HttpTestClient.Response res = switch (r.nextInt(6)) {
                        case 0, 1 ->
                            http.post(
                                    "/register",
                                    "{\"instance_id\":" + id + ",\"dp_rank\":" + rank
                                            + ",\"endpoint\":\"tcp://127.0.0.1:" + (20000 + id) + "\",\"model_name\":\""
                                            + model
                                            + "\",\"block_size\":4}");
                        case 2 ->
                            http.post(
                                    "/unregister",
                                    "{\"instance_id\":" + id + ",\"model_name\":\"" + model
                                            + "\""
                                            + (r.nextBoolean() ? ",\"tenant_id\":\"default\",\"dp_rank\":" + rank : "")
                                            + "}");
                        case 3 ->
                            http.post("/query", "{\"token_ids\":[1,2,3,4,5,6,7,8],\"model_name\":\"" + model + "\"}");
                        case 4 -> http.get("/workers");
                        default -> http.get("/dump");
                    };
                    statuses.computeIfAbsent(res.status(), s -> new AtomicInteger())
                            .incrementAndGet();
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get(5, TimeUnit.MINUTES);
        }
        pool.shutdown();
        assertThat(statuses.keySet()).isSubsetOf(DOCUMENTED);

        // end state: every listed worker is queryable under its model, and the gauges agree with /workers
        var workers = http.get("/workers").json();
        for (var w : workers) {
            http.post(
                            "/query",
                            "{\"token_ids\":[1,2,3,4],\"model_name\":\""
                                    + w.get("model_name").asText() + "\"}")
                    .assertStatus(200);
        }
        assertThat(app.workers().instanceCount()).isEqualTo(workers.size());
    }
}
