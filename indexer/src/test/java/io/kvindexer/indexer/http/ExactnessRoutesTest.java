package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.ingest.InflightBytes;
import io.kvindexer.indexer.ingest.IngestSettings;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Exactness as a router reads it, against a real indexer and real simulated engines over ZeroMQ (whose replay
 * ROUTER behaves like vLLM's): each listener's {@code exactness} in {@code /workers} through all three states and
 * back, {@code exact} per instance in {@code /query} (JSON and msgpack), {@code /query_by_hash} and
 * {@code /query_tiered_by_hash}, and the gauge {@code dynamo_kvindexer_listeners_by_exactness}.
 */
class ExactnessRoutesTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final String GAUGE = "dynamo_kvindexer_listeners_by_exactness";

    @RegisterExtension
    final TestResources resources = new TestResources();

    private IndexerApp app;
    private HttpTestClient http;

    private void start(Duration hold) throws Exception {
        start(hold, c -> {});
    }

    /** With this degraded hold and {@code more} configuration. */
    private void start(Duration hold, Consumer<IndexerConfig.Draft> more) throws Exception {
        app = resources.add(IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.ingest = new IngestSettings(InflightBytes.defaultBudget(), hold);
            more.accept(c);
        })));
        http = resources.add(new HttpTestClient(app.baseUrl()));
    }

    /**
     * An indexer with this degraded hold, and one engine (instance 1) whose blocks of tokens 1..8 it indexed, its
     * listener exact: a new registration is {@code replaying} until the engine's first batch or its buffer says it
     * missed nothing (on a loaded machine the catch-up it asks for after a quiet second may still run when the
     * blocks show).
     */
    private EngineSimulator indexedEngine(Duration hold) throws Exception {
        start(hold);
        EngineSimulator sim = engine(10_000);
        http.registerEngine(sim);
        sim.storeSequence(range(1, 8), 4).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> score(1, 8) == 8);
        awaitExactness("exact");
        return sim;
    }

    /** Instance 1 keeps its last 4 batches (seqs 0..5 are gone), instance 2 all of them. */
    private record RunningEngines(EngineSimulator shortBuffer, EngineSimulator longBuffer) {}

    /**
     * An indexer, and two engines that published ten batches each before it registered them; with
     * {@code holdLongBuffersAnswers}, instance 2's engine holds its replay answers until released.
     */
    private RunningEngines joinRunningEngines(boolean holdLongBuffersAnswers) throws Exception {
        start(Duration.ofMinutes(1));
        EngineSimulator shortBuffer = engine(4);
        EngineSimulator longBuffer = engine(10_000);
        for (int i = 0; i < 10; i++) {
            shortBuffer.storeSequence(range(1000 * i + 1, 1000 * i + 4), 4).get(30, TimeUnit.SECONDS);
            longBuffer.storeSequence(range(1000 * i + 1, 1000 * i + 4), 4).get(30, TimeUnit.SECONDS);
        }
        longBuffer.deferReplays(holdLongBuffersAnswers);
        register(1, shortBuffer);
        register(2, longBuffer);
        return new RunningEngines(shortBuffer, longBuffer);
    }

    private EngineSimulator engine(int bufferSteps) {
        return resources.add(EngineSimulator.start(
                EngineSimulator.Options.builder().bufferSteps(bufferSteps).build()));
    }

    @Test
    void aLostGapDegradesTheWorkerUntilAllBlocksClearedOrARestartAndEveryAnswerSaysSo() throws Exception {
        EngineSimulator sim = indexedEngine(Duration.ofMinutes(1));
        JsonNode exact = listener();
        assertThat(exact.get("exactness").asText()).isEqualTo("exact");
        assertThat(exact.has("exactness_reason")).isFalse();
        assertThat(exact.get("exactness_since_ms").asLong()).isPositive();
        assertEveryAnswerSays(true, range(1, 8));
        assertThat(gauge("exact")).isEqualTo(1);
        assertThat(gauge("degraded")).isZero();

        // batches the engine never buffered: no replay can bring them
        long beforeLoss = System.currentTimeMillis();
        sim.skip(3);
        sim.storeSequence(range(1, 12), 4).get(30, TimeUnit.SECONDS);
        awaitExactness("degraded");
        JsonNode degraded = listener();
        assertThat(degraded.get("exactness_reason").asText()).contains("replay incomplete");
        assertThat(degraded.get("exactness_since_ms").asLong()).isBetween(beforeLoss, System.currentTimeMillis());
        assertThat(gauge("degraded")).isEqualTo(1);
        assertThat(gauge("exact")).isZero();
        // live events index what is stored from now on, but the worker stays degraded: it may still under-report
        sim.storeSequence(range(301, 308), 4).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> score(301, 308) == 8);
        assertEveryAnswerSays(false, range(301, 308));
        assertThat(listener().get("exactness").asText()).isEqualTo("degraded");

        // the engine says what it holds: nothing
        sim.publish(EngineSimulator.cleared()).get(30, TimeUnit.SECONDS);
        awaitExactness("exact");
        sim.storeSequence(range(1, 8), 4).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> score(1, 8) == 8);
        assertEveryAnswerSays(true, range(1, 8));
        assertThat(gauge("exact")).isEqualTo(1);

        // degraded again, then the engine restarts (its seq starts over): nothing lost is owed any more
        sim.skip(2);
        sim.storeSequence(range(401, 404), 4).get(30, TimeUnit.SECONDS);
        awaitExactness("degraded");
        sim.restart();
        sim.storeSequence(range(1, 8), 4).get(30, TimeUnit.SECONDS);
        awaitExactness("exact");
        await().atMost(PATIENCE).until(() -> score(1, 8) == 8);
        assertEveryAnswerSays(true, range(1, 8));
    }

    @Test
    void aGapBeingReplayedIsReplayingThenExact() throws Exception {
        EngineSimulator sim = indexedEngine(Duration.ofMinutes(1));

        sim.deferReplays(true); // the engine holds the replay answer until released
        sim.dropLive(2);
        sim.storeSequence(range(1, 12), 4).get(30, TimeUnit.SECONDS); // buffered, not sent
        sim.storeSequence(range(201, 204), 4).get(30, TimeUnit.SECONDS);
        sim.storeSequence(range(501, 504), 4).get(30, TimeUnit.SECONDS); // sent: shows the gap
        awaitExactness("replaying");
        assertThat(listener().get("exactness_reason").asText()).startsWith("replaying batches ");
        assertEveryAnswerSays(false, range(1, 8));
        assertThat(gauge("replaying")).isEqualTo(1);

        // answers from now on, and what it held: a request the listener sent again after a timeout (2 s, which
        // the checks above can take on a loaded machine) is answered too
        sim.deferReplays(false);
        sim.releaseDeferredReplays().get(30, TimeUnit.SECONDS);
        awaitExactness("exact");
        await().atMost(PATIENCE).until(() -> score(1, 12) == 12); // the replayed chain
        assertEveryAnswerSays(true, range(1, 12));
        assertThat(gauge("replaying")).isZero();
    }

    @Test
    void joiningARunningEngineIsDegradedUnlessItsBufferReachesBackToItsFirstBatch() throws Exception {
        RunningEngines engines = joinRunningEngines(false);
        EngineSimulator shortBuffer = engines.shortBuffer();
        EngineSimulator longBuffer = engines.longBuffer();
        shortBuffer.storeSequence(range(50_001, 50_004), 4).get(30, TimeUnit.SECONDS);
        longBuffer.storeSequence(range(50_001, 50_004), 4).get(30, TimeUnit.SECONDS);

        await().atMost(PATIENCE)
                .until(() -> "degraded".equals(listener(1).path("exactness").asText()));
        assertThat(listener(1).get("exactness_reason").asText())
                .startsWith("joined an engine that was already running: ");
        await().atMost(PATIENCE)
                .until(() -> "exact".equals(listener(2).path("exactness").asText())
                        && query(range(1, 4)).at("/scores/2/0").asInt() == 4); // seq 0, replayed
        JsonNode first = query(range(1, 4));
        assertThat(first.at("/scores/1/0").isMissingNode())
                .as("the short buffer's seq 0 is gone: instance 1 under-reports, as its exactness says")
                .isTrue();
        assertThat(longBuffer.replays().starts()).contains(0L);
        await().atMost(PATIENCE)
                .until(() -> query(range(50_001, 50_004)).get("instances").size() == 2);
        JsonNode instances = query(range(50_001, 50_004)).get("instances");
        assertThat(instances.at("/1/exact").asBoolean()).isFalse();
        assertThat(instances.at("/2/exact").asBoolean()).isTrue();
        assertThat(gauge("degraded")).isEqualTo(1);
        assertThat(gauge("exact")).isEqualTo(1);
    }

    @Test
    void aRegistrationLearnsAtOnceWhetherItJoinedARunningEngineThatIsIdleNow() throws Exception {
        RunningEngines engines = joinRunningEngines(true);
        EngineSimulator longBuffer = engines.longBuffer();
        // neither engine publishes again: what the indexer learns, it learns from the catch-up it asks for when
        // no batch comes; until then the listener is not exact
        await().atMost(PATIENCE).until(() -> longBuffer.replays().starts().contains(0L));
        JsonNode joining = listener(2);
        assertThat(joining.get("exactness").asText()).isEqualTo("replaying");
        assertThat(joining.get("exactness_reason").asText()).startsWith("joining: ");
        longBuffer.deferReplays(false);
        longBuffer.releaseDeferredReplays().get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE)
                .until(() -> "degraded".equals(listener(1).path("exactness").asText())
                        && "exact".equals(listener(2).path("exactness").asText()));
        assertThat(listener(1).get("exactness_reason").asText())
                .startsWith("joined an engine that was already running: ");
        await().atMost(PATIENCE)
                .until(() -> query(range(1, 4)).at("/scores/2/0").asInt() == 4
                        && query(range(9001, 9004)).get("instances").size() == 2);
        JsonNode instances = query(range(9001, 9004)).get("instances");
        assertThat(instances.at("/1/exact").asBoolean())
                .as("instance 1 answers what its buffer still held, and says it may hold more")
                .isFalse();
        assertThat(instances.at("/2/exact").asBoolean()).isTrue();
        assertThat(query(range(1, 4)).at("/scores/1/0").isMissingNode())
                .as("the short buffer's seq 0 is gone")
                .isTrue();
    }

    @Test
    void anUndecodableBatchDegradesAndTheHoldEndsIt() throws Exception {
        Duration hold = Duration.ofMillis(1500);
        EngineSimulator sim = indexedEngine(hold);

        sim.publishPayload("not msgpack".getBytes(StandardCharsets.UTF_8)).get(30, TimeUnit.SECONDS);
        awaitExactness("degraded");
        JsonNode degraded = listener();
        assertThat(degraded.get("exactness_reason").asText()).contains("did not decode");
        long since = degraded.get("exactness_since_ms").asLong();
        assertEveryAnswerSays(false, range(1, 8));

        awaitExactness("exact");
        assertThat(listener().get("exactness_since_ms").asLong())
                .as("exact again when the hold ran out, not when someone looked")
                .isBetween(since + hold.toMillis() - 5, since + hold.toMillis() + 50);
        assertEveryAnswerSays(true, range(1, 8));
    }

    /**
     * A paused listener reads nothing while its engine may store and remove blocks: {@code degraded} in /workers and
     * not exact in the answers, though its stream was exact when it stopped (the gauge, of running listeners, leaves
     * it out). Resumed, it is {@code replaying} until its stream shows what it missed: the catch-up from the replay
     * buffer (instance 1), or without a replay endpoint the engine's next batch (instance 2).
     */
    @Test
    void aPausedListenerIsNotExactAndOnceResumedIsExactWhenItsStreamShowsWhatItMissed() throws Exception {
        start(Duration.ofMinutes(1), c -> c.testEndpoints = true);
        EngineSimulator replayable = engine(10_000);
        EngineSimulator noReplay = engine(10_000);
        register(1, replayable);
        registerWithoutReplay(2, noReplay);
        replayable.storeSequence(range(1, 8), 4).get(30, TimeUnit.SECONDS);
        noReplay.storeSequence(range(1, 8), 4).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE)
                .until(() -> query(range(1, 8)).at("/scores/1/0").asInt() == 8
                        && query(range(1, 8)).at("/scores/2/0").asInt() == 8
                        && "exact".equals(listener(1).path("exactness").asText())
                        && "exact".equals(listener(2).path("exactness").asText()));

        long beforePause = System.currentTimeMillis();
        http.post("/test/pause_listener", "{\"instance_id\":1}").assertStatus(200);
        http.post("/test/pause_listener", "{\"instance_id\":2}").assertStatus(200);
        for (long id : new long[] {1, 2}) {
            JsonNode paused = listener(id);
            assertThat(paused.get("status").asText()).isEqualTo("paused");
            assertThat(paused.get("exactness").asText()).isEqualTo("degraded");
            assertThat(paused.get("exactness_reason").asText()).startsWith("paused: ");
            assertThat(paused.get("exactness_since_ms").asLong()).isBetween(beforePause, System.currentTimeMillis());
        }
        JsonNode answer = query(range(1, 8));
        assertThat(answer.at("/scores/1/0").asInt())
                .as("its blocks are still answered")
                .isEqualTo(8);
        assertThat(answer.at("/instances/1/exact").asBoolean()).isFalse();
        assertThat(answer.at("/instances/2/exact").asBoolean()).isFalse();
        assertThat(gauge("degraded"))
                .as("paused listeners read no stream: not counted")
                .isZero();
        replayable.storeSequence(range(101, 104), 4).get(30, TimeUnit.SECONDS); // seq 1, missed

        int subscribed = noReplay.subscriptions();
        http.post("/test/resume_listener", "{\"instance_id\":1}").assertStatus(200);
        http.post("/test/resume_listener", "{\"instance_id\":2}").assertStatus(200);
        await().atMost(PATIENCE)
                .until(() -> "exact".equals(listener(1).path("exactness").asText())
                        && query(range(101, 104)).at("/scores/1/0").asInt() == 4);
        assertThat(query(range(101, 104)).at("/instances/1/exact").asBoolean())
                .as("caught up from the replay buffer")
                .isTrue();
        await().atMost(PATIENCE).until(() -> noReplay.subscriptions() > subscribed);
        await().atMost(PATIENCE)
                .until(() -> "active".equals(listener(2).path("status").asText()));
        JsonNode resumed = listener(2);
        assertThat(resumed.get("exactness").asText())
                .as("nothing shows yet whether the engine published while nobody read")
                .isEqualTo("replaying");
        assertThat(resumed.get("exactness_reason").asText()).startsWith("resumed: ");
        assertThat(query(range(1, 8)).at("/instances/2/exact").asBoolean()).isFalse();
        noReplay.storeSequence(range(201, 204), 4).get(30, TimeUnit.SECONDS); // seq 1: nothing was missed
        await().atMost(PATIENCE)
                .until(() -> "exact".equals(listener(2).path("exactness").asText()));
        assertThat(query(range(1, 8)).at("/instances/2/exact").asBoolean()).isTrue();
    }

    /**
     * A worker back within {@code --unregister-grace} gets its blocks back while its stream goes on from the
     * watermark; nobody listened while it was unregistered, so without a replay endpoint it is {@code replaying}
     * until the engine's next batch shows whether any were missed, as after a restart from the grace file (it was
     * exact at once, claiming blocks the engine may have removed meanwhile).
     */
    @Test
    void aComebackWithinTheUnregisterGraceWithoutAReplayEndpointIsExactOnlyOnceTheNextBatchContinues()
            throws Exception {
        start(Duration.ofMinutes(1), c -> c.unregisterGrace = Duration.ofMinutes(1));
        EngineSimulator sim = engine(10_000);
        registerWithoutReplay(1, sim);
        sim.storeSequence(range(1, 8), 4).get(30, TimeUnit.SECONDS); // seq 0
        await().atMost(PATIENCE).until(() -> score(1, 8) == 8);
        awaitExactness("exact");
        http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}").assertStatus(200);
        assertThat(score(1, 8)).as("detached: no answer names it").isZero();

        registerWithoutReplay(1, sim);
        assertThat(score(1, 8)).as("given back").isEqualTo(8);
        JsonNode back = listener();
        assertThat(back.get("exactness").asText()).isEqualTo("replaying");
        assertThat(back.get("exactness_reason").asText()).contains("--unregister-grace", "next batch");
        assertEveryAnswerSays(false, range(1, 8));
        sim.storeSequence(range(201, 204), 4).get(30, TimeUnit.SECONDS); // seq 1: nothing was missed
        awaitExactness("exact");
        assertEveryAnswerSays(true, range(1, 8));
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    /** {@code exact} of instance 1 in /query (JSON and msgpack), /query_by_hash and /query_tiered_by_hash. */
    private void assertEveryAnswerSays(boolean exact, int[] tokens) throws Exception {
        assertThat(query(tokens).at("/instances/1/exact").isBoolean()).isTrue();
        assertThat(query(tokens).at("/instances/1/exact").asBoolean())
                .as("/query")
                .isEqualTo(exact);
        HttpResponse<byte[]> packed = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(app.baseUrl() + "/query"))
                                .POST(HttpRequest.BodyPublishers.ofString(body(tokens)))
                                .header("Content-Type", "application/json")
                                .header("Accept", "application/msgpack")
                                .build(),
                        HttpResponse.BodyHandlers.ofByteArray());
        assertThat(MsgpackQueryTest.fromMsgpack(packed.body())
                        .at("/instances/1/exact")
                        .asBoolean())
                .as("/query in msgpack")
                .isEqualTo(exact);
        String hashes = Arrays.stream(
                        app.indexers().get("m", "default").orElseThrow().localHashes(tokens, null, null))
                .mapToObj(Long::toString)
                .collect(Collectors.joining(",", "[", "]"));
        String byHash = "{\"model_name\":\"m\",\"block_hashes\":" + hashes + "}";
        assertThat(http.post("/query_by_hash", byHash)
                        .json()
                        .at("/instances/1/exact")
                        .asBoolean())
                .as("/query_by_hash")
                .isEqualTo(exact);
        assertThat(http.post("/query_tiered_by_hash", byHash)
                        .json()
                        .at("/instances/1/exact")
                        .asBoolean())
                .as("/query_tiered_by_hash")
                .isEqualTo(exact);
    }

    private void register(long id, EngineSimulator sim) {
        int subscribed = sim.subscriptions();
        http.post(
                        "/register",
                        "{\"instance_id\":" + id + ",\"endpoint\":\"" + sim.endpoint() + "\",\"replay_endpoint\":\""
                                + sim.replayEndpoint() + "\",\"model_name\":\"m\",\"block_size\":4}")
                .assertStatus(201);
        await().atMost(PATIENCE).until(() -> sim.subscriptions() > subscribed);
    }

    private void registerWithoutReplay(long id, EngineSimulator sim) {
        int subscribed = sim.subscriptions();
        http.post(
                        "/register",
                        "{\"instance_id\":" + id + ",\"endpoint\":\"" + sim.endpoint()
                                + "\",\"model_name\":\"m\",\"block_size\":4}")
                .assertStatus(201);
        await().atMost(PATIENCE).until(() -> sim.subscriptions() > subscribed);
    }

    private void awaitExactness(String state) {
        await().atMost(PATIENCE)
                .until(() -> state.equals(listener().path("exactness").asText()));
    }

    private JsonNode listener() {
        return listener(1);
    }

    private JsonNode listener(long id) {
        return HttpTestClient.worker(http.get("/workers").json(), id)
                .get("listeners")
                .get("0");
    }

    private static String body(int[] tokens) {
        return "{\"model_name\":\"m\",\"token_ids\":" + Arrays.toString(tokens).replace(" ", "") + "}";
    }

    private JsonNode query(int[] tokens) {
        return http.post("/query", body(tokens)).json();
    }

    private int score(int from, int to) {
        JsonNode scores = query(range(from, to)).get("scores");
        return scores == null
                ? 0
                : scores.path("1").path("0").asInt(scores.path("2").path("0").asInt());
    }

    private double gauge(String state) {
        return http.metric(GAUGE + "{exactness=\"" + state + "\"}");
    }

    private static int[] range(int from, int to) {
        return IntStream.rangeClosed(from, to).toArray();
    }
}
