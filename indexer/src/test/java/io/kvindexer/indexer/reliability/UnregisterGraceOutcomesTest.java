package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code dynamo_kvindexer_unregister_grace_total{outcome}}: every way a worker's detached blocks end is counted once,
 * against real in-process engine simulators (ZeroMQ PUB and replay ROUTER) and a real indexer.
 */
class UnregisterGraceOutcomesTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);

    @RegisterExtension
    final TestResources resources = new TestResources();

    private static String registration(String endpoint, String replay, String model, int blockSize) {
        return "{\"instance_id\":1,\"endpoint\":\"" + endpoint + "\""
                + (replay == null ? "" : ",\"replay_endpoint\":\"" + replay + "\"")
                + ",\"model_name\":\"" + model + "\",\"block_size\":" + blockSize + "}";
    }

    private static void register(HttpTestClient http, EngineSimulator sim) {
        http.post("/register", registration(sim.endpoint(), sim.replayEndpoint(), FaultHarness.MODEL, 16))
                .assertStatus(201);
    }

    private static void unregister(HttpTestClient http, String model) {
        http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"" + model + "\"}")
                .assertStatus(200);
    }

    /** The outcome counts as a scrape shows them (every outcome is exposed). */
    private static Map<String, Long> outcomes(HttpTestClient http) {
        Map<String, Long> out = new TreeMap<>();
        String prefix = "dynamo_kvindexer_unregister_grace_total{outcome=\"";
        http.get("/metrics")
                .body()
                .lines()
                .filter(l -> l.startsWith(prefix))
                .forEach(l -> out.put(l.substring(prefix.length(), l.indexOf('"', prefix.length())), (long)
                        Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1))));
        return out;
    }

    private static Map<String, Long> only(String... outcomesOnce) {
        Map<String, Long> expected = new TreeMap<>();
        for (String o : new String[] {"reattached", "restart", "gap", "block_size", "endpoint", "index", "expired"}) {
            expected.put(o, 0L);
        }
        for (String o : outcomesOnce) {
            expected.merge(o, 1L, Long::sum);
        }
        return expected;
    }

    private EngineSimulator engine() {
        return resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
    }

    /** Registers the engine's worker and waits until its stores (seqs 0..4) are applied. */
    private void indexed(HttpTestClient http, EngineSimulator sim) {
        register(http, sim);
        await().atMost(PATIENCE).until(() -> sim.subscriptions() > 0);
        for (int i = 0; i < 5; i++) {
            sim.storeSequence(IntStream.range(i * 100, i * 100 + 32).toArray(), 16);
        }
        await().atMost(PATIENCE).until(() -> FaultHarness.dumpMemberships(http).size() == 10);
    }

    /** A client of a real indexer whose unregistered workers keep their blocks for {@code grace}. */
    private HttpTestClient indexer(Duration grace) throws Exception {
        IndexerApp app = resources.add(IndexerApp.start(IndexerConfig.defaults().with(c -> c.unregisterGrace = grace)));
        return resources.add(new HttpTestClient(app.baseUrl()));
    }

    /** An engine whose worker was indexed and then unregistered: its blocks wait out the grace, detached. */
    private EngineSimulator detached(HttpTestClient http) {
        EngineSimulator sim = engine();
        indexed(http, sim);
        unregister(http, FaultHarness.MODEL);
        return sim;
    }

    @Test
    void aComebackAndEachMismatchAreCountedOnce() throws Exception {
        HttpTestClient http = indexer(Duration.ofMinutes(2));
        EngineSimulator sim = engine();
        assertThat(outcomes(http)).as("every outcome exposed before any").isEqualTo(only());

        indexed(http, sim);
        unregister(http, FaultHarness.MODEL);
        register(http, sim);
        assertThat(outcomes(http)).isEqualTo(only("reattached"));
        await().atMost(PATIENCE).until(() -> FaultHarness.dumpMemberships(http).size() == 10);
        // the stream goes on (confirmed): the same store again every half second until it is seen, since one
        // published before the new subscription reaches the engine is lost
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).until(() -> {
            sim.storeSequence(IntStream.range(900, 932).toArray(), 16);
            return FaultHarness.dumpMemberships(http).size() == 12;
        });

        unregister(http, FaultHarness.MODEL);
        EngineSimulator elsewhere = engine();
        http.post("/register", registration(elsewhere.endpoint(), null, FaultHarness.MODEL, 16))
                .assertStatus(201);
        assertThat(outcomes(http)).isEqualTo(only("reattached", "endpoint"));

        unregister(http, FaultHarness.MODEL);
        http.post("/register", registration(elsewhere.endpoint(), null, "other-model", 16))
                .assertStatus(201);
        assertThat(outcomes(http)).isEqualTo(only("reattached", "endpoint", "index"));

        unregister(http, "other-model");
        http.post("/register", registration(elsewhere.endpoint(), null, "other-model", 32))
                .assertStatus(201);
        assertThat(outcomes(http)).isEqualTo(only("reattached", "endpoint", "index", "block_size"));
        assertThat(FaultHarness.dumpMemberships(http))
                .as("nothing came back with a mismatch")
                .isEmpty();
    }

    @Test
    void anEngineRestartAfterTheComebackIsCountedAsRestart() throws Exception {
        HttpTestClient http = indexer(Duration.ofMinutes(2));
        EngineSimulator sim = engine();
        indexed(http, sim);
        java.util.Set<String> old = FaultHarness.dumpMemberships(http);
        unregister(http, FaultHarness.MODEL);
        sim.restart(); // a new engine process at the same address: seq 0 again, its cache empty
        register(http, sim);
        // stores with seqs 0, 1, 2, 3, all below the kept watermark (4), one every half second until one is seen:
        // a store published before the new subscription reaches the engine is lost, as with a real PUB socket
        int[] published = {0};
        await().atMost(PATIENCE).pollInterval(Duration.ofMillis(500)).until(() -> {
            if (outcomes(http).get("restart") == 1) {
                return true;
            }
            if (published[0] < 4) {
                int from = 5_000 + 100 * published[0]++;
                sim.storeSequence(IntStream.range(from, from + 16).toArray(), 16);
            }
            return false;
        });
        assertThat(outcomes(http)).isEqualTo(only("reattached", "restart"));
        // the catch-up on connect may have seen the restart before any store (the engine's replay held nothing from
        // the watermark on): one more, on the subscription that is up by now
        sim.storeSequence(IntStream.range(6_000, 6_016).toArray(), 16);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(FaultHarness.dumpMemberships(http))
                        .as("the old blocks are gone, a new one is in")
                        .doesNotContainAnyElementsOf(old)
                        .isNotEmpty());
    }

    /**
     * An engine that restarted while its worker was unregistered and published past the kept watermark (seqs 0..6 of
     * the new process, watermark 4) shows no seq going back; the catch-up's answer for seq 4 is another batch than the
     * one applied, so the kept blocks go and the new process's buffer is replayed. They used to come back as
     * {@code reattached}, with the new process's seqs 5 and 6 on top and its 0..4 never asked for.
     */
    @Test
    void anEngineThatRestartedPastTheKeptWatermarkIsCountedAsRestart() throws Exception {
        HttpTestClient http = indexer(Duration.ofMinutes(2));
        EngineSimulator sim = engine();
        indexed(http, sim);
        java.util.Set<String> old = FaultHarness.dumpMemberships(http);
        unregister(http, FaultHarness.MODEL);
        sim.restart(); // a new engine process at the same address: seq 0 again, its cache empty
        for (int i = 0; i < 7; i++) {
            sim.storeSequence(
                            IntStream.range(5_000 + i * 100, 5_000 + i * 100 + 32)
                                    .toArray(),
                            16)
                    .join(); // sent before the register below: nobody listens
        }
        register(http, sim);
        await().atMost(PATIENCE).until(() -> outcomes(http).get("restart") == 1);
        assertThat(outcomes(http)).isEqualTo(only("reattached", "restart"));
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(FaultHarness.dumpMemberships(http))
                        .as("the old blocks are gone, the new process's seven stores are in")
                        .doesNotContainAnyElementsOf(old)
                        .hasSize(14));
    }

    @Test
    void batchesTheEngineNoLongerHasAreCountedAsGap() throws Exception {
        HttpTestClient http = indexer(Duration.ofMinutes(2));
        EngineSimulator sim = detached(http);
        sim.skip(3); // batches sent while nobody listened, gone from the engine's buffer
        sim.storeSequence(IntStream.range(7_000, 7_016).toArray(), 16);
        register(http, sim); // resumes from the kept watermark as it connects: the engine lacks what follows it
        await().atMost(PATIENCE).until(() -> outcomes(http).get("gap") == 1);
        assertThat(outcomes(http)).isEqualTo(only("reattached", "gap"));
    }

    @Test
    void aWorkerThatDoesNotComeBackIsCountedAsExpired() throws Exception {
        HttpTestClient http = indexer(Duration.ofMillis(300));
        EngineSimulator sim = detached(http);
        assertThat(outcomes(http)).isEqualTo(only());
        await().atMost(PATIENCE).until(() -> outcomes(http).get("expired") == 1);
        register(http, sim);
        assertThat(outcomes(http)).as("nothing left to reattach").isEqualTo(only("expired"));
    }
}
