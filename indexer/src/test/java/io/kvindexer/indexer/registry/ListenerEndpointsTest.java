package io.kvindexer.indexer.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.ingest.Exactness;
import io.kvindexer.indexer.ingest.ExactnessState;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimulatorBuilder;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Which watermark a registration gets (same endpoint: the learned one; another endpoint: a fresh one), and
 * engines at bracketed IPv6 addresses, through {@code /register} and {@code --workers}: real indexer, real
 * simulators, real sockets.
 */
class ListenerEndpointsTest {

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    final TestResources open = new TestResources();

    private HttpTestClient http;
    private String model = "m";

    private IndexerApp app(IndexerConfig config) throws Exception {
        IndexerApp app = IndexerApp.start(config);
        open.add(app);
        http = new HttpTestClient(app.baseUrl());
        open.add(http);
        return app;
    }

    private EngineSimulator engine(SimulatorBuilder builder) {
        EngineSimulator sim = builder.start();
        open.add(sim);
        return sim;
    }

    private void register(long instance, EngineSimulator sim) {
        HttpTestClient.Response r = http.post(
                "/register",
                "{\"instance_id\":" + instance + ",\"endpoint\":\""
                        + sim.endpoint() + "\",\"replay_endpoint\":\"" + sim.replayEndpoint()
                        + "\",\"model_name\":\"m\",\"block_size\":4}");
        assertThat(r.status()).as(r.body()).isEqualTo(201);
    }

    /** A new engine with the default options, registered as {@code instance}, once the indexer subscribed. */
    private EngineSimulator subscribedEngine(long instance) {
        EngineSimulator sim = engine(EngineSimulator.Options.builder());
        register(instance, sim);
        await().atMost(PATIENCE).until(() -> sim.subscriptions() >= 1);
        return sim;
    }

    private void unregister(long instance) {
        HttpTestClient.Response r = http.post(
                "/unregister", "{\"instance_id\":" + instance + ",\"model_name\":\"m\",\"tenant_id\":\"default\"}");
        assertThat(r.status()).as(r.body()).isLessThan(300);
    }

    private int score(long instance, int from) {
        String tokens =
                Arrays.toString(IntStream.range(from, from + 4).toArray()).replace(" ", "");
        return http.post("/query", "{\"model_name\":\"" + model + "\",\"token_ids\":" + tokens + "}")
                .json()
                .path("scores")
                .path(Long.toString(instance))
                .path("0")
                .asInt();
    }

    private static void store(EngineSimulator sim, int from) throws Exception {
        sim.storeSequence(IntStream.range(from, from + 4).toArray(), 4).get(30, TimeUnit.SECONDS);
    }

    @Test
    void aRegistrationAtANewEndpointStartsAFreshWatermark() throws Exception {
        IndexerApp app = app(IndexerConfig.defaults());
        EngineSimulator a = subscribedEngine(7);
        store(a, 100); // seq 0 at A
        await().atMost(PATIENCE).until(() -> score(7, 100) > 0);
        unregister(7);

        EngineSimulator b = subscribedEngine(7); // a new pod, a new address
        store(b, 200); // B's first batch: seq 0 again, and not stale

        await().atMost(PATIENCE).until(() -> score(7, 200) > 0);
        assertThat(score(7, 100)).isZero();
        assertThat(app.workers().watermark(7, 0).get()).isZero();
        assertThat(b.replays().starts())
                .as("B's seq 0 is not a gap (a new registration's catch-up from 0 may have run before it came)")
                .allMatch(seq -> seq == 0L);
    }

    @Test
    void aRegistrationAtTheSameEndpointKeepsTheWatermark() throws Exception {
        IndexerApp app = app(IndexerConfig.defaults());
        EngineSimulator a = subscribedEngine(7);
        store(a, 100); // seq 0
        store(a, 110); // seq 1
        await().atMost(PATIENCE).until(() -> score(7, 110) > 0);
        unregister(7);
        store(a, 120); // seq 2, nobody listens

        register(7, a); // the same engine again
        await().atMost(PATIENCE).until(() -> a.subscriptions() >= 2);
        store(a, 130); // seq 3

        await().atMost(PATIENCE).until(() -> score(7, 130) > 0 && score(7, 120) > 0);
        assertThat(a.replays().starts())
                .as("from 1, the watermark, as soon as it connected again (after the first registration's catch-up"
                        + " from 0, if any)")
                .filteredOn(seq -> seq != 0L)
                .first()
                .isEqualTo(1L);
        assertThat(score(7, 100)).as("dropped by the unregister, not replayed").isZero();
        assertThat(app.workers().watermark(7, 0).get()).isEqualTo(3);
        // so the index may under-report the worker: it says so instead of claiming to be exact
        assertThat(app.workers().exact(7)).isFalse();
        Exactness.Reading reading =
                app.workers().list(model, "default").get(0).listeners().get(0).exactness();
        assertThat(reading.state()).isEqualTo(ExactnessState.DEGRADED);
        assertThat(reading.reason())
                .startsWith("registered again at the same endpoint: /unregister dropped the blocks of batches up to"
                        + " seq 1, which are not replayed");
    }

    @Test
    void aRegistrationFromAKnownWatermarkAsksForWhatCameAfterItAtOnce() throws Exception {
        IndexerApp app = app(IndexerConfig.defaults());
        EngineSimulator a = engine(EngineSimulator.Options.builder());
        for (int i = 0; i < 5; i++) {
            store(a, 100 + 10 * i); // seqs 0..4, nobody listens
        }

        app.workers().register(new Registration(7, a.endpoint(), "m", "default", 4, 0, a.replayEndpoint(), null), 2);

        // no live batch follows: the listener asks for 2.. (from the watermark itself) as soon as it is connected
        await().atMost(PATIENCE).until(() -> score(7, 130) > 0 && score(7, 140) > 0);
        assertThat(a.replays().starts()).first().isEqualTo(2L);
        assertThat(score(7, 120))
                .as("at or below the watermark: skipped when it comes back")
                .isZero();
        assertThat(app.workers().watermark(7, 0).get()).isEqualTo(4);
    }

    @Test
    void anEngineAtABracketedIpv6AddressIsListenedToAndReplayedFrom() throws Exception {
        app(IndexerConfig.defaults());
        EngineSimulator sim = engine(
                EngineSimulator.Options.builder().endpoint("tcp://[::1]:*").replayEndpoint("tcp://[::1]:*"));
        assertThat(sim.endpoint()).startsWith("tcp://[::1]:");
        register(9, sim);
        await().atMost(PATIENCE).until(() -> sim.subscriptions() >= 1);
        store(sim, 100); // seq 0 over the IPv6 SUB
        await().atMost(PATIENCE).until(() -> score(9, 100) > 0);
        sim.dropLive(1);
        store(sim, 110); // seq 1, lost live
        store(sim, 120); // seq 2: the gap is replayed over the IPv6 DEALER

        await().atMost(PATIENCE).until(() -> score(9, 110) > 0 && score(9, 120) > 0);
        // (a DEALER is made per replay; one whose handshake is late on a loaded machine is made again and re-asks)
        assertThat(sim.replays().requests()).isPositive();
        String workers = http.get("/workers").body();
        assertThat(workers).contains("\"status\":\"active\"").doesNotContain("last_error");
    }

    @Test
    void aWorkersFlagEntryAtABracketedIpv6AddressIsListenedTo() throws Exception {
        EngineSimulator sim = engine(
                EngineSimulator.Options.builder().endpoint("tcp://[::1]:*").replayEndpoint(null));
        List<WorkerEntry> workers = WorkerEntry.parseList("11=" + sim.endpoint());
        app(IndexerConfig.defaults().with(c -> {
            c.blockSize = 4;
            c.workers = workers;
        }));
        model = "default"; // the --model-name of --workers
        await().atMost(PATIENCE).until(() -> sim.subscriptions() >= 1);
        store(sim, 100);

        await().atMost(PATIENCE).until(() -> score(11, 100) > 0);
        assertThat(http.get("/workers").body()).contains("\"status\":\"active\"");
    }
}
