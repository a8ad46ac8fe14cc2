package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.expiry.ExpiryPolicy;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.ingest.Exactness;
import io.kvindexer.indexer.ingest.ExactnessState;
import io.kvindexer.indexer.ingest.IdleListener;
import io.kvindexer.indexer.ingest.InflightBytes;
import io.kvindexer.indexer.ingest.IngestSettings;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import io.kvindexer.indexer.metrics.MetricsEndpointTest;
import io.kvindexer.indexer.registry.ListenerFactory;
import io.kvindexer.indexer.registry.Registration;
import io.kvindexer.indexer.registry.WorkerRegistry;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimEvent;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A failed index write leaves no partial index behind: against a real indexer and simulated engines over ZeroMQ, a
 * batch that throws half-way ({@link ModelIndex#failNextWrite}) drops every block of its worker rank (what it had
 * stored before and the half it applied), degrades that listener until the rank's {@code AllBlocksCleared}, leaves
 * the instance's other rank and other instances alone, is counted once, and later events index again. A write no
 * listener delivered (block expiry, a reattach after {@code --unregister-grace}, recovery's adopt) degrades the
 * listener of its worker just the same, through the registry's hook ({@link Indexers#onFailedWrite}).
 */
class FailedWriteTest {

    private static final Duration PATIENCE = Duration.ofSeconds(30);
    private static final String FAILURES = "dynamo_kvindexer_index_write_failures_total";
    private static final int BLOCK = 4;

    @RegisterExtension
    final TestResources resources = new TestResources();

    private IndexerApp app;
    private HttpTestClient http;

    /** Instance 1 (ranks 0 and 1 on one stream) and instance 2, each holding a chain, every listener exact. */
    private EngineSimulator[] twoIndexedEngines() throws Exception {
        return twoIndexedEngines(c -> {});
    }

    /** The same, with {@code config} set on the indexer's configuration as well. */
    private EngineSimulator[] twoIndexedEngines(Consumer<IndexerConfig.Draft> config) throws Exception {
        app = resources.add(IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.ingest = new IngestSettings(InflightBytes.defaultBudget(), Duration.ofMinutes(1));
            config.accept(c);
        })));
        http = resources.add(new HttpTestClient(app.baseUrl()));
        EngineSimulator one = engine();
        EngineSimulator two = engine();
        register(1, one);
        register(2, two);
        one.storeSequence(range(1, 8), BLOCK).get(30, TimeUnit.SECONDS);
        storeOnRank(one, 1, range(101, 108)).get(30, TimeUnit.SECONDS);
        two.storeSequence(range(1, 8), BLOCK).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE)
                .until(() -> score(range(1, 8), 1, 0) > 0
                        && score(range(101, 108), 1, 1) > 0
                        && score(range(1, 8), 2, 0) > 0
                        && "exact".equals(exactness(1))
                        && "exact".equals(exactness(2)));
        return new EngineSimulator[] {one, two};
    }

    @Test
    void aWriteThatFailsHalfWayDropsItsRankAndDegradesItsListenerUntilTheRankIsCleared() throws Exception {
        EngineSimulator[] engines = twoIndexedEngines();
        EngineSimulator one = engines[0];
        int rankZero = score(range(1, 8), 1, 0);
        int otherInstance = score(range(1, 8), 2, 0);
        assertThat(failures()).isZero();

        // a batch of two chains for rank 1: the first is applied, then the write throws
        index().failNextWrite(new WorkerKey(1, 1), 1, false);
        one.publishWithRank(1, List.of(chain(range(201, 208)), chain(range(301, 308))))
                .get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> failures() == 1);

        assertDegraded(1, "index write of batch seq", "dropped the blocks of dp_rank 1");
        assertThat(score(range(101, 108), 1, 1))
                .as("what rank 1 stored before the failure is gone")
                .isZero();
        assertThat(score(range(201, 208), 1, 1))
                .as("the half of the failed batch that was applied is not claimed")
                .isZero();
        assertThat(score(range(301, 308), 1, 1)).isZero();
        JsonNode answer = query(range(1, 8));
        assertThat(answer.at("/scores/1/0").asInt())
                .as("rank 0 of the same stream")
                .isEqualTo(rankZero);
        assertThat(answer.at("/scores/2/0").asInt()).as("another instance").isEqualTo(otherInstance);
        assertThat(answer.at("/instances/1/exact").asBoolean()).isFalse();
        assertThat(answer.at("/instances/2/exact").asBoolean()).isTrue();
        assertThat(exactness(2)).isEqualTo("exact");

        // the writers go on: rank 1's later events index again, still not exact
        storeOnRank(one, 1, range(401, 408)).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> score(range(401, 408), 1, 1) > 0);
        assertThat(query(range(401, 408)).at("/instances/1/exact").asBoolean()).isFalse();

        // the engine says what rank 1 holds: nothing, so nothing is owed any more
        one.publishWithRank(1, List.of(EngineSimulator.cleared())).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> "exact".equals(exactness(1)));
        storeOnRank(one, 1, range(501, 508)).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> score(range(501, 508), 1, 1) > 0);
        assertThat(query(range(501, 508)).at("/instances/1/exact").asBoolean()).isTrue();
        assertThat(failures()).isEqualTo(1);
    }

    @Test
    void aDropThatFailsTooIsCountedOnceAndTheWritersGoOn() throws Exception {
        EngineSimulator[] engines = twoIndexedEngines();
        index().failNextWrite(new WorkerKey(1, 0), 0, true);
        engines[0].storeSequence(range(601, 608), BLOCK).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> "degraded".equals(exactness(1)));
        await().atMost(PATIENCE).until(() -> failures() == 1);

        // neither writer thread stopped nor retries: both instances' later events index, the count stays at one
        engines[0].storeSequence(range(701, 708), BLOCK).get(30, TimeUnit.SECONDS);
        engines[1].storeSequence(range(701, 708), BLOCK).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> score(range(701, 708), 1, 0) > 0 && score(range(701, 708), 2, 0) > 0);
        app.indexers().flushAll().get(30, TimeUnit.SECONDS);
        assertThat(failures()).isEqualTo(1);
        JsonNode answer = query(range(701, 708));
        assertThat(answer.at("/instances/1/exact").asBoolean())
                .as("blocks the failed drop left behind are not vouched for")
                .isFalse();
        assertThat(answer.at("/instances/2/exact").asBoolean()).isTrue();
    }

    @Test
    void aFailedBlockExpiryDropsTheWorkerAndDegradesItsListenerThoughNoBatchOfItsFailed() throws Exception {
        EngineSimulator[] engines =
                twoIndexedEngines(c -> c.expiry = new ExpiryPolicy(Map.of(StorageTier.DISK, Duration.ofSeconds(5)), 0));
        EngineSimulator one = engines[0];
        one.storeSequence(range(801, 808), BLOCK, "DISK", null).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> diskBlocks(1) == 2);
        assertThat(exactness(1)).isEqualTo("exact");
        // the worker's next write is the expiry of its disk chain, due on the writer thread in about 5 s
        index().failNextWrite(new WorkerKey(1, 0), 0, false);
        await().atMost(PATIENCE).until(() -> failures() == 1);

        assertDegraded(1, "no listener delivered", "dropped the blocks of dp_rank 0");
        assertThat(score(range(1, 8), 1, 0))
                .as("the device chain the failed expiry did not touch is dropped with the rest of the rank")
                .isZero();
        assertThat(score(range(101, 108), 1, 1)).as("rank 1 of the same stream").isGreaterThan(0);
        JsonNode answer = query(range(1, 8));
        assertThat(answer.at("/instances/1/exact").asBoolean()).isFalse();
        assertThat(answer.at("/instances/2/exact").asBoolean()).isTrue();

        one.publish(List.of(EngineSimulator.cleared())).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> "exact".equals(exactness(1)));
        assertThat(failures()).isEqualTo(1);
    }

    @Test
    void aFailedReattachAfterTheUnregisterGraceDegradesTheListenerThatRegisteredAgain() throws Exception {
        EngineSimulator[] engines = twoIndexedEngines(c -> c.unregisterGrace = Duration.ofMinutes(1));
        EngineSimulator one = engines[0];
        http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}").assertStatus(200);
        assertThat(score(range(1, 8), 1, 0)).as("detached: no answer names it").isZero();
        // instance 2 keeps the index: the reattach is the next write of (1, 0) there, applied in part, then failing
        index().failNextWrite(new WorkerKey(1, 0), 1, false);
        register(1, one);
        await().atMost(PATIENCE).until(() -> failures() == 1);
        await().atMost(PATIENCE).until(() -> "degraded".equals(exactness(1)));
        assertDegraded(1, "no listener delivered", "dropped the blocks of dp_rank 0");
        app.indexers().flushAll().get(30, TimeUnit.SECONDS);
        assertThat(blocksOf(index(), new WorkerKey(1, 0)))
                .as("neither the reattached half nor the rest is claimed")
                .isZero();
        JsonNode answer = query(range(1, 8));
        assertThat(answer.at("/instances/2/exact").asBoolean()).isTrue();
        assertThat(answer.at("/scores/2/0").asInt()).isGreaterThan(0);

        // the stream goes on: new blocks index, still not exact until the engine clears the rank
        one.storeSequence(range(901, 908), BLOCK).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> score(range(901, 908), 1, 0) > 0);
        assertThat(query(range(901, 908)).at("/instances/1/exact").asBoolean()).isFalse();
        one.publish(List.of(EngineSimulator.cleared())).get(30, TimeUnit.SECONDS);
        await().atMost(PATIENCE).until(() -> "exact".equals(exactness(1)));
        assertThat(failures()).isEqualTo(1);
    }

    @Test
    void aFailedAdoptOfRecoveredBlocksDegradesTheListenerRestoredForThatWorker() throws Exception {
        Map<Long, Exactness> listeners = new ConcurrentHashMap<>();
        ListenerFactory factory = (spec, watermark, sink) -> new IdleListener(
                IdleListener.pending(spec).snapshot(),
                listeners.computeIfAbsent(spec.instanceId(), id -> new Exactness(Duration.ofMinutes(1))));
        try (Indexers indexers = new Indexers(IndexOptions.defaults());
                WorkerRegistry registry = new WorkerRegistry(indexers, factory)) {
            registry.register(new Registration(1, "tcp://127.0.0.1:5001", "m", "default", BLOCK, 0, null, null));
            ModelIndex live = indexers.getOrCreate("m", "default", BLOCK);
            live.submit(new WorkerKey(1, 0), List.of(stored(range(1, 8)))); // not empty: adopt submits the ops
            ModelIndex staged = indexers.detached("m", "default", BLOCK);
            WorkerKey recovered = new WorkerKey(2, 0);
            staged.submit(recovered, List.of(stored(range(1, 8)), stored(range(11, 18))));
            indexers.flushAll().get(30, TimeUnit.SECONDS);
            registry.beginRecovery();

            live.failNextWrite(recovered, 1, false);
            SavedRegistration saved = new SavedRegistration(
                    2, 0, "tcp://127.0.0.1:5002", null, null, "m", "default", BLOCK, SequenceWatermark.UNSET);
            assertThat(registry.finishRecovery(List.of(saved), () -> live.adopt(staged)))
                    .isOne();
            indexers.flushAll().get(30, TimeUnit.SECONDS);

            assertThat(indexers.writeFailures()).isEqualTo(1);
            assertThat(blocksOf(live, recovered)).isZero();
            assertThat(blocksOf(live, new WorkerKey(1, 0))).isEqualTo(2);
            assertThat(listeners.get(2L).read().state()).isEqualTo(ExactnessState.DEGRADED);
            assertThat(listeners.get(2L).read().reason()).contains("no listener delivered", "dp_rank 0");
            assertThat(registry.exact(2)).isFalse();
            assertThat(registry.exact(1)).isTrue();
        }
    }

    @Test
    void aFailedWriteWithoutAListenerStillDropsItsWorkerAndOnlyIt() throws Exception {
        try (Indexers indexers = new Indexers(IndexOptions.defaults())) {
            ModelIndex index = indexers.getOrCreate("m", "default", BLOCK);
            WorkerKey failing = new WorkerKey(1, 0);
            WorkerKey other = new WorkerKey(2, 0);
            index.submit(failing, List.of(stored(range(1, 8))));
            index.submit(other, List.of(stored(range(1, 8))));
            index.flush().get(30, TimeUnit.SECONDS);
            assertThat(blocksOf(index, failing)).isEqualTo(2);
            index.failNextWrite(failing, 1, false);
            index.submit(failing, List.of(stored(range(11, 18)), stored(range(21, 28))));
            index.flush().get(30, TimeUnit.SECONDS);

            assertThat(indexers.writeFailures()).isEqualTo(1);
            assertThat(blocksOf(index, failing)).isZero();
            assertThat(blocksOf(index, other)).isEqualTo(2);

            index.submit(failing, List.of(stored(range(31, 38))));
            index.flush().get(30, TimeUnit.SECONDS);
            assertThat(blocksOf(index, failing)).isEqualTo(2);
            assertThat(indexers.writeFailures()).isEqualTo(1);
        }
    }

    // ---- helpers -------------------------------------------------------------------------------------------

    /** Disk-tier blocks of (instance, rank 0) in {@code /dump}. */
    private long diskBlocks(long instance) {
        app.indexers().flushAll().join();
        long[] n = {0};
        index().dump((w, tier, hasParent, parent, block, local) -> {
            if (w.equals(new WorkerKey(instance, 0)) && tier == StorageTier.DISK) {
                n[0]++;
            }
        });
        return n[0];
    }

    private ModelIndex index() {
        return app.indexers().get("m", "default").orElseThrow();
    }

    private static long blocksOf(ModelIndex index, WorkerKey worker) {
        long[] n = {0};
        index.dump((w, tier, hasParent, parent, block, local) -> {
            if (w.equals(worker)) {
                n[0]++;
            }
        });
        return n[0];
    }

    private static KvEvent stored(int[] tokens) {
        long[] hashes = EngineSimulator.sequenceHashes(tokens, BLOCK, null);
        return new BlockStored(hashes, false, 0, tokens, BLOCK, null, StorageTier.DEVICE, null, false);
    }

    private static SimEvent chain(int[] tokens) {
        return EngineSimulator.stored(
                EngineSimulator.sequenceHashes(tokens, BLOCK, null), null, tokens, BLOCK, "GPU", null);
    }

    private static CompletableFuture<Long> storeOnRank(EngineSimulator sim, int rank, int[] tokens) {
        return sim.publishWithRank(rank, List.of(chain(tokens)));
    }

    private EngineSimulator engine() {
        return resources.add(EngineSimulator.start(
                EngineSimulator.Options.builder().bufferSteps(10_000).build()));
    }

    private void register(long id, EngineSimulator sim) {
        int subscribed = sim.subscriptions();
        http.post(
                        "/register",
                        "{\"instance_id\":" + id + ",\"endpoint\":\"" + sim.endpoint() + "\",\"replay_endpoint\":\""
                                + sim.replayEndpoint() + "\",\"model_name\":\"m\",\"block_size\":" + BLOCK + "}")
                .assertStatus(201);
        await().atMost(PATIENCE).until(() -> sim.subscriptions() > subscribed);
    }

    private JsonNode listener(long id) {
        return HttpTestClient.worker(http.get("/workers").json(), id)
                .get("listeners")
                .get("0");
    }

    /** The instance's listener is degraded by the injected failure, its reason naming {@code parts} too. */
    private void assertDegraded(long id, String... parts) {
        JsonNode listener = listener(id);
        assertThat(listener.get("exactness").asText()).isEqualTo("degraded");
        assertThat(listener.get("exactness_reason").asText())
                .contains("injected write failure")
                .contains(parts);
    }

    private String exactness(long id) {
        return listener(id).path("exactness").asText();
    }

    private JsonNode query(int[] tokens) {
        return http.post(
                        "/query",
                        "{\"model_name\":\"m\",\"token_ids\":"
                                + Arrays.toString(tokens).replace(" ", "") + "}")
                .json();
    }

    /** The score of (instance, rank) for these tokens; 0 when the answer does not name it. */
    private int score(int[] tokens, long instance, int rank) {
        return query(tokens)
                .path("scores")
                .path(Long.toString(instance))
                .path(Integer.toString(rank))
                .asInt(0);
    }

    private double failures() {
        return MetricsEndpointTest.parse(http.get("/metrics").body()).getOrDefault(FAILURES, -1.0);
    }

    private static int[] range(int from, int to) {
        return IntStream.rangeClosed(from, to).toArray();
    }
}
