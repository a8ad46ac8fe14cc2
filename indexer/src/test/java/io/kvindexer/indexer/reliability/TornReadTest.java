package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.testing.junit5.ServerTest;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.http.IndexerHarness;
import io.kvindexer.indexer.http.IndexerRoutes;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Writers and readers hammer one (model, tenant). Every engine keeps its cache prefix-closed (it stores a chain
 * block by block, parent first, and evicts it leaf first, like vLLM's free queue for one request), so any consistent
 * view of the index is prefix-closed too. Readers take {@code /dump} and {@code /query} concurrently and check
 * that no stored block is visible without its parent chain, and that scores are whole chain prefixes.
 */
@ServerTest
@IndexerRoutes
class TornReadTest {

    private static final int WORKERS = 4;
    private static final int CHAINS = 6;
    private static final int CHAIN_BLOCKS = 12;
    private static final int BLOCK = 16;

    @Test
    void readersNeverSeeABlockWithoutItsParentChain(WebServer server) throws Exception {
        long runMillis = ReliabilityReport.scaled(3_000, 20);
        int[][] chains = new int[CHAINS][CHAIN_BLOCKS * BLOCK];
        long[][] hashes = new long[CHAINS][];
        for (int c = 0; c < CHAINS; c++) {
            for (int t = 0; t < chains[c].length; t++) {
                // chains share their first 4 blocks in pairs, so workers contend on the same tree nodes
                chains[c][t] = t < 4 * BLOCK ? (c / 2) * 100_000 + t : c * 100_000 + t;
            }
            hashes[c] = EngineSimulator.sequenceHashes(chains[c], BLOCK, null);
        }
        List<EngineSimulator> sims = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<String> torn = new ConcurrentLinkedQueue<>();
        AtomicLong batches = new AtomicLong();
        AtomicLong dumpsChecked = new AtomicLong();
        AtomicLong queriesChecked = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        String baseUrl = IndexerHarness.baseUrl(server);
        try (FaultHarness h = new FaultHarness(baseUrl)) {
            for (int w = 1; w <= WORKERS; w++) {
                FaultHarness.Engine e = h.addEngine(w, EngineSimulator.Options.defaults(), 1, true);
                sims.add(e.sim);
            }
            for (int w = 0; w < WORKERS; w++) {
                EngineSimulator sim = sims.get(w);
                int worker = w;
                threads.add(Thread.ofPlatform().name("writer-" + w).start(() -> {
                    int round = 0;
                    while (!stop.get()) {
                        long[] chain = hashes[(worker + round++) % CHAINS];
                        // store parent first ... (a block another chain already stored is held once per worker)
                        Set<Long> held = sim.held(0, io.kvindexer.indexer.common.StorageTier.DEVICE);
                        List<Long> added = new ArrayList<>();
                        for (int i = 0; i < chain.length; i++) {
                            if (held.contains(chain[i])) {
                                continue;
                            }
                            sim.publish(storedLink(chain, i, chains[0]));
                            added.add(chain[i]);
                            batches.incrementAndGet();
                        }
                        // ... and evict leaf first
                        for (int i = added.size() - 1; i >= 0; i--) {
                            sim.publish(EngineSimulator.removed(new long[] {added.get(i)}, "GPU"));
                            batches.incrementAndGet();
                        }
                    }
                }));
            }
            for (int r = 0; r < 2; r++) {
                threads.add(Thread.ofPlatform().name("dump-reader-" + r).start(() -> {
                    try (HttpTestClient http = new HttpTestClient(baseUrl)) {
                        while (!stop.get()) {
                            checkDump(http.get("/dump").json(), torn);
                            dumpsChecked.incrementAndGet();
                        }
                    }
                }));
                int reader = r;
                threads.add(Thread.ofPlatform().name("query-reader-" + r).start(() -> {
                    try (HttpTestClient http = new HttpTestClient(baseUrl)) {
                        int i = reader;
                        while (!stop.get()) {
                            int c = i++ % CHAINS;
                            HttpTestClient.Response resp = http.post(
                                    "/query",
                                    "{\"model_name\":\"m\",\"token_ids\":"
                                            + Arrays.toString(chains[c]).replace(" ", "") + "}");
                            if (resp.status() == 404) {
                                continue; // before the first registration's index exists
                            }
                            resp.json().path("scores").properties().forEach(worker -> {
                                long s = worker.getValue().path("0").asLong();
                                if (s % BLOCK != 0 || s > (long) CHAIN_BLOCKS * BLOCK) {
                                    torn.add("query score " + s + " for worker " + worker.getKey());
                                }
                            });
                            queriesChecked.incrementAndGet();
                        }
                    }
                }));
            }
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(runMillis);
            org.awaitility.Awaitility.await()
                    .atMost(Duration.ofMinutes(10))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> System.nanoTime() >= until || !torn.isEmpty());
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
            // every engine ends holding one whole chain, so the final comparison is not of two empty sets
            for (int w = 0; w < WORKERS; w++) {
                long[] chain = hashes[w % CHAINS];
                for (int i = 0; i < chain.length; i++) {
                    sims.get(w).publish(storedLink(chain, i, chains[0]));
                    batches.incrementAndGet();
                }
            }
            long stopAt = System.nanoTime();
            long convergeMs = h.awaitConverged(Duration.ofSeconds(120));
            assertThat(h.groundTruth()).hasSize(WORKERS * CHAIN_BLOCKS);
            assertThat(torn).as("torn reads").isEmpty();
            assertThat(dumpsChecked.get()).isPositive();
            assertThat(queriesChecked.get()).isPositive();
            ReliabilityReport.record(new ReliabilityReport.Row(
                    "concurrency-torn-reads",
                    "readers and writers on one (model, tenant)",
                    WORKERS + " writers (chain store parent-first, evict leaf-first) vs 2 /dump + 2 /query readers, "
                            + runMillis / 1000 + " s",
                    dumpsChecked.get() + queriesChecked.get(),
                    batches.get(),
                    h.metric("dynamo_kvindexer_batches_applied_total"),
                    h.groundTruth().size(),
                    h.dump().size(),
                    torn.size(),
                    convergeMs,
                    dumpsChecked.get() + " dumps and " + queriesChecked.get()
                            + " queries checked, no block seen without its parent chain; exact at the end"));
            assertThat(stopAt).isPositive();
        } finally {
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
        }
    }

    /** Block {@code i} of {@code chain}, stored under its parent (the tokens do not matter to the index). */
    private static SimEvent.Stored storedLink(long[] chain, int i, int[] tokens) {
        return EngineSimulator.stored(
                new long[] {chain[i]},
                i == 0 ? null : chain[i - 1],
                Arrays.copyOfRange(tokens, 0, BLOCK),
                BLOCK,
                "GPU",
                null);
    }

    /** Every stored block's parent must be stored for the same (worker, rank) in the same dump. */
    private static void checkDump(JsonNode dump, ConcurrentLinkedQueue<String> torn) {
        Map<String, Set<Long>> blocks = new HashMap<>();
        Map<String, Map<Long, Long>> parents = new HashMap<>();
        dump.properties()
                .forEach(model -> model.getValue().path("events").forEach(ev -> {
                    String owner = ev.get("worker_id").asText() + "/"
                            + ev.at("/event/dp_rank").asInt();
                    JsonNode stored = ev.at("/event/data/stored");
                    JsonNode parent = stored.path("parent_hash");
                    long previous = parent.isNull() || parent.isMissingNode()
                            ? 0
                            : parent.bigIntegerValue().longValue();
                    boolean hasPrevious = !(parent.isNull() || parent.isMissingNode());
                    for (JsonNode b : stored.path("blocks")) {
                        long hash = b.get("block_hash").bigIntegerValue().longValue();
                        blocks.computeIfAbsent(owner, k -> new HashSet<>()).add(hash);
                        if (hasPrevious) {
                            parents.computeIfAbsent(owner, k -> new HashMap<>()).put(hash, previous);
                        }
                        previous = hash;
                        hasPrevious = true;
                    }
                }));
        parents.forEach((owner, map) -> map.forEach((child, parent) -> {
            if (!blocks.get(owner).contains(parent)) {
                torn.add("dump: worker " + owner + " holds " + Long.toUnsignedString(child) + " without its parent "
                        + Long.toUnsignedString(parent));
            }
        }));
    }
}
