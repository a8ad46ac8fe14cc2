package io.kvindexer.indexer.expiry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.reliability.FaultHarnessAccess;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --block-ttl} and {@code --max-blocks-per-worker} on every tier, end to end: a real indexer, a simulated
 * engine publishing over real ZeroMQ sockets on each medium, {@code /dump} and {@code /metrics} read over HTTP.
 */
class BlockExpiryRoutesTest {

    private static final int BLOCK = 4;
    /** one medium per tier, as an engine names it */
    private static final Map<StorageTier, String> MEDIUM = new EnumMap<>(Map.of(
            StorageTier.DEVICE, "GPU",
            StorageTier.HOST_PINNED, "CPU",
            StorageTier.DISK, "DISK",
            StorageTier.EXTERNAL, "EXTERNAL"));

    @RegisterExtension
    final TestResources resources = new TestResources();

    private HttpTestClient http;
    private EngineSimulator sim;

    @Test
    void aBlockNotStoredAgainWithinItsTierTtlExpiresAndStoringAgainStartsItsTimeOver() throws Exception {
        Map<StorageTier, Duration> ttl = new EnumMap<>(StorageTier.class);
        for (StorageTier t : StorageTier.values()) {
            ttl.put(t, Duration.ofSeconds(3));
        }
        start(new ExpiryPolicy(ttl, 0));
        int[] kept = tokens(1, 3); // stored every 250 ms: never older than its TTL
        int[] dropped = tokens(100, 5); // stored once
        long[] keptHashes = EngineSimulator.sequenceHashes(kept, BLOCK, null);
        List<SimEvent> storeKeptAgain = new ArrayList<>();
        for (StorageTier t : StorageTier.values()) {
            storeKeptAgain.add(EngineSimulator.stored(keptHashes, null, kept, BLOCK, MEDIUM.get(t), null));
        }
        // the engine stores `kept` again on every tier, one batch every 250 ms, on its own thread: no HTTP read of
        // the test's can delay it
        ScheduledExecutorService engine = Executors.newSingleThreadScheduledExecutor();
        try {
            engine.scheduleAtFixedRate(() -> sim.publish(storeKeptAgain), 0, 250, TimeUnit.MILLISECONDS);
            for (StorageTier t : StorageTier.values()) {
                sim.storeSequence(dropped, BLOCK, MEDIUM.get(t), null).get(30, TimeUnit.SECONDS);
            }
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> {
                        // every tier saw the once-stored chain: held now with the other, or already expiring
                        Map<StorageTier, Set<Long>> byTier = dumpByTier();
                        for (StorageTier t : StorageTier.values()) {
                            if (byTier.getOrDefault(t, Set.of()).size() != 8 && expired(t, "ttl") == 0) {
                                return false;
                            }
                        }
                        return true;
                    });
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> dumpByTier().values().stream().allMatch(s -> s.equals(set(keptHashes)))
                            && dumpByTier().size() == StorageTier.values().length);
            for (StorageTier t : StorageTier.values()) {
                assertThat(expired(t, "ttl")).as("ttl expiries on " + t).isEqualTo(5);
                assertThat(expired(t, "capacity"))
                        .as("no cap: no capacity series")
                        .isEqualTo(-1);
            }
        } finally {
            engine.shutdownNow();
            engine.awaitTermination(10, TimeUnit.SECONDS);
        }
        // left alone, the chains stored again expire too; the engine still holds them, the index does not
        await().atMost(Duration.ofSeconds(30)).until(() -> dumpByTier().isEmpty());
        for (StorageTier t : StorageTier.values()) {
            assertThat(expired(t, "ttl")).as("ttl expiries on " + t).isEqualTo(8);
        }
        String metrics = http.get("/metrics").body();
        assertThat(metrics).contains("dynamo_kvindexer_block_ttl_seconds{tier=\"disk\"} 3.0");
        assertThat(metrics).contains("dynamo_kvindexer_max_blocks_per_worker 0.0");
        // the removals were applied as engine removals: counted as such, none missing
        assertThat(metrics).contains("dynamo_kvrouter_kv_cache_events_applied{event_type=\"removed\",status=\"ok\"}");
        assertThat(metrics).doesNotContain("status=\"block_not_found\"");
    }

    @Test
    void aWorkerAboveTheCapLosesItsOldestStoredBlocksOnThatTierDownToNinetyPercent() throws Exception {
        start(new ExpiryPolicy(Map.of(), 10)); // evicts down to 9
        int[] first = tokens(1, 6);
        int[] second = tokens(200, 3);
        int[] third = tokens(300, 3);
        for (StorageTier t : StorageTier.values()) {
            String medium = MEDIUM.get(t);
            sim.storeSequence(first, BLOCK, medium, null).get(30, TimeUnit.SECONDS);
            sim.storeSequence(second, BLOCK, medium, null).get(30, TimeUnit.SECONDS);
            // stored again: now the newest, so `second` is the oldest-stored
            long[] firstHashes = EngineSimulator.sequenceHashes(first, BLOCK, null);
            sim.publish(EngineSimulator.stored(firstHashes, null, first, BLOCK, medium, null))
                    .get(30, TimeUnit.SECONDS);
            sim.storeSequence(third, BLOCK, medium, null).get(30, TimeUnit.SECONDS); // 12 > 10
        }
        Set<Long> expected = set(EngineSimulator.sequenceHashes(first, BLOCK, null));
        expected.addAll(set(EngineSimulator.sequenceHashes(third, BLOCK, null)));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Map<StorageTier, Set<Long>> byTier = dumpByTier();
            assertThat(byTier.keySet()).containsExactlyInAnyOrder(StorageTier.values());
            byTier.values().forEach(held -> assertThat(held).isEqualTo(expected));
        });
        for (StorageTier t : StorageTier.values()) {
            assertThat(expired(t, "capacity")).as("capacity evictions on " + t).isEqualTo(3);
            assertThat(expired(t, "ttl")).as("no TTL: no ttl series").isEqualTo(-1);
        }
        // at 9 of 10 a store of one block is no eviction
        sim.storeSequence(tokens(400, 1), BLOCK, "CPU", null).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> dumpByTier().get(StorageTier.HOST_PINNED).size() == 10);
        assertThat(expired(StorageTier.HOST_PINNED, "capacity")).isEqualTo(3);
    }

    /** A series that could never move is not exposed: each flag brings the reason it can cause, on its tiers. */
    @Test
    void eachBoundExposesOnlyTheSeriesItCanMove() throws Exception {
        String ttlOnly = metricsOf(new ExpiryPolicy(Map.of(StorageTier.DISK, Duration.ofMinutes(1)), 0));
        assertThat(ttlOnly)
                .contains("dynamo_kvindexer_blocks_expired_total{reason=\"ttl\",tier=\"disk\"} 0.0")
                .doesNotContain("reason=\"capacity\"")
                .doesNotContain("reason=\"ttl\",tier=\"device\"");
        String capOnly = metricsOf(new ExpiryPolicy(Map.of(), 10));
        for (StorageTier t : StorageTier.values()) {
            assertThat(capOnly)
                    .contains("dynamo_kvindexer_blocks_expired_total{reason=\"capacity\",tier=\"" + t.jsonName()
                            + "\"} 0.0");
        }
        assertThat(capOnly).doesNotContain("reason=\"ttl\"");
    }

    /** The /metrics page of a new indexer with {@code policy}. */
    private String metricsOf(ExpiryPolicy policy) throws Exception {
        IndexerApp app = resources.add(IndexerApp.start(IndexerConfig.defaults().with(c -> c.expiry = policy)));
        return resources.add(new HttpTestClient(app.baseUrl())).get("/metrics").body();
    }

    private void start(ExpiryPolicy policy) throws Exception {
        IndexerApp app = resources.add(IndexerApp.start(IndexerConfig.defaults().with(c -> c.expiry = policy)));
        http = resources.add(new HttpTestClient(app.baseUrl()));
        sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        http.post(
                        "/register",
                        "{\"instance_id\":1,\"endpoint\":\"" + sim.endpoint() + "\",\"replay_endpoint\":\""
                                + sim.replayEndpoint() + "\",\"model_name\":\"m\",\"block_size\":" + BLOCK + "}")
                .assertStatus(201);
        await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1);
    }

    /** {@code blocks} full blocks of distinct tokens starting at {@code from}. */
    private static int[] tokens(int from, int blocks) {
        return IntStream.range(from, from + blocks * BLOCK).toArray();
    }

    private static Set<Long> set(long[] hashes) {
        return new HashSet<>(Arrays.stream(hashes).boxed().toList());
    }

    /** The block hashes {@code /dump} holds for worker 1, per tier (tiers holding none are absent). */
    private Map<StorageTier, Set<Long>> dumpByTier() {
        Map<StorageTier, Set<Long>> out = new EnumMap<>(StorageTier.class);
        for (String m : FaultHarnessAccess.canonical(http.get("/dump").body())) {
            String[] p = m.split("/");
            int n = p.length;
            out.computeIfAbsent(StorageTier.fromJsonName(p[n - 2]), t -> new TreeSet<>())
                    .add(Long.parseUnsignedLong(p[n - 1]));
        }
        return out;
    }

    private long expired(StorageTier tier, String reason) {
        return (long) http.metric(
                "dynamo_kvindexer_blocks_expired_total{reason=\"" + reason + "\",tier=\"" + tier.jsonName() + "\"}");
    }
}
