package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.PrefixCacheEngine;
import io.kvindexer.indexer.sim.SimEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Engines with a realistic cache (an LRU {@link PrefixCacheEngine} behind each {@link EngineSimulator}) publishing
 * into a running indexer reached over HTTP, and the comparisons every fault test makes: {@code /dump} as a set of
 * (worker, rank, tier, block) memberships against the simulators' ground truth, and {@code /query} for sampled
 * prompts against the score computed from ground truth.
 */
final class FaultHarness implements AutoCloseable {

    static final String MODEL = "m";
    static final int BLOCK = 16;

    /** One engine: its publisher, its cache model and its own random prompt stream. */
    final class Engine implements AutoCloseable {
        final long workerId;
        EngineSimulator sim;
        PrefixCacheEngine cache;
        final int capacity;
        final Random random;
        long batchesSent;
        long blockEventsSent;
        final List<Set<Long>> droppedBatchBlocks = new ArrayList<>();

        Engine(long workerId, EngineSimulator sim, int capacity, long seed) {
            this.workerId = workerId;
            this.sim = sim;
            this.capacity = capacity;
            this.cache = new PrefixCacheEngine(capacity, BLOCK);
            this.random = new Random(seed);
        }

        /** Serves {@code steps} prompts; {@code dropProbability} of the batches are lost live (kept for replay). */
        void drive(int steps, double dropProbability) throws Exception {
            CompletableFuture<Long> last = null;
            for (int i = 0; i < steps; i++) {
                PrefixCacheEngine.Served served = cache.serve(prompt(random));
                if (served.events().isEmpty()) {
                    continue;
                }
                boolean drop = random.nextDouble() < dropProbability;
                last = publish(served.events(), drop);
            }
            if (last != null) {
                last.get(60, TimeUnit.SECONDS);
            }
        }

        /** Loses the next {@code n} batches live (they stay in the replay buffer, when it is big enough). */
        void dropBurst(int n) throws Exception {
            int published = 0;
            CompletableFuture<Long> last = null;
            while (published < n) {
                PrefixCacheEngine.Served served = cache.serve(prompt(random));
                if (!served.events().isEmpty()) {
                    last = publish(served.events(), true);
                    published++;
                }
            }
            last.get(60, TimeUnit.SECONDS);
        }

        /** One live batch with a never-seen prompt: reveals any gap before it. */
        void liveProbe() throws Exception {
            int[] tokens = new int[BLOCK * 2];
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = 1_000_000 + random.nextInt(1_000_000);
            }
            PrefixCacheEngine.Served served = cache.serve(tokens);
            publish(served.events(), false).get(60, TimeUnit.SECONDS);
        }

        private CompletableFuture<Long> publish(List<SimEvent> events, boolean drop) {
            if (drop) {
                sim.dropLive(1);
                Set<Long> touched = new HashSet<>();
                for (SimEvent e : events) {
                    if (e instanceof SimEvent.Stored s) {
                        for (long h : s.hashes()) {
                            touched.add(h);
                        }
                    } else if (e instanceof SimEvent.Removed r) {
                        for (long h : r.hashes()) {
                            touched.add(h);
                        }
                    }
                }
                droppedBatchBlocks.add(touched);
            }
            batchesSent++;
            for (SimEvent e : events) {
                if (e instanceof SimEvent.Stored s) {
                    blockEventsSent += s.hashes().length;
                } else if (e instanceof SimEvent.Removed r) {
                    blockEventsSent += r.hashes().length;
                }
            }
            return sim.publish(events);
        }

        /** The engine process restarts: seq 0, empty cache (its simulator keeps its sockets). */
        void restart() {
            sim.restart();
            cache = new PrefixCacheEngine(capacity, BLOCK);
        }

        void register(HttpTestClient http) {
            HttpTestClient.Response r = http.post(
                    "/register",
                    "{\"instance_id\":" + workerId + ",\"endpoint\":\""
                            + sim.endpoint() + "\",\"replay_endpoint\":\"" + sim.replayEndpoint()
                            + "\",\"model_name\":\""
                            + MODEL + "\",\"block_size\":" + BLOCK + "}");
            assertThat(r.status()).as(r.body()).isEqualTo(201);
        }

        @Override
        public void close() {
            sim.close();
        }
    }

    /** Prompts share a few system prefixes (so engines overlap and the tree branches) plus a random tail. */
    static int[] prompt(Random random) {
        int prefix = random.nextInt(8);
        int prefixBlocks = 2 + prefix % 4;
        int tailBlocks = random.nextInt(6);
        int[] tokens = new int[(prefixBlocks + tailBlocks) * BLOCK];
        for (int i = 0; i < prefixBlocks * BLOCK; i++) {
            tokens[i] = prefix * 10_000 + i;
        }
        int tailSeed = random.nextInt(400);
        for (int i = prefixBlocks * BLOCK; i < tokens.length; i++) {
            tokens[i] = 100_000 + tailSeed * 1_000 + i;
        }
        return tokens;
    }

    final HttpTestClient http;
    final List<Engine> engines = new ArrayList<>();

    FaultHarness(String baseUrl) {
        this.http = new HttpTestClient(baseUrl);
    }

    Engine addEngine(long workerId, EngineSimulator.Options options, int capacity, boolean register) {
        Engine e = new Engine(workerId, EngineSimulator.start(options), capacity, 7919L * workerId);
        engines.add(e);
        if (register) {
            e.register(http);
            await().atMost(Duration.ofSeconds(60)).until(() -> e.sim.subscriptions() >= 1);
        }
        return e;
    }

    /** One thread per engine driving a request about every 3 ms until {@code stop} is set (join them after). */
    List<Thread> driveInBackground(AtomicBoolean stop) {
        List<Thread> load = new ArrayList<>();
        for (Engine e : engines) {
            load.add(Thread.ofPlatform().name("load-" + e.workerId).start(() -> {
                while (!stop.get()) {
                    try {
                        e.drive(1, 0);
                        Thread.sleep(3);
                    } catch (Exception ex) {
                        return;
                    }
                }
            }));
        }
        return load;
    }

    /** What the engines hold: {@code worker/rank/tier/block}. */
    Set<String> groundTruth() {
        Set<String> out = new HashSet<>();
        for (Engine e : engines) {
            for (Map.Entry<EngineSimulator.Holder, Set<Long>> h :
                    e.sim.groundTruth().entrySet()) {
                for (long b : h.getValue()) {
                    out.add(membership(
                            e.workerId, h.getKey().dpRank(), h.getKey().tier(), b));
                }
            }
        }
        return out;
    }

    /** What the indexer's {@code /dump} holds, same shape. */
    static Set<String> dumpMemberships(HttpTestClient http) {
        HttpTestClient.Response r = http.get("/dump");
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        Set<String> out = new HashSet<>();
        r.json()
                .properties()
                .forEach(model -> model.getValue().path("events").forEach(ev -> {
                    long worker = ev.get("worker_id").bigIntegerValue().longValue();
                    StorageTier tier =
                            StorageTier.fromJsonName(ev.path("storage_tier").asText("device"));
                    int rank = ev.at("/event/dp_rank").asInt(0);
                    for (JsonNode b : ev.at("/event/data/stored/blocks")) {
                        out.add(membership(
                                worker,
                                rank,
                                tier,
                                b.get("block_hash").bigIntegerValue().longValue()));
                    }
                }));
        return out;
    }

    Set<String> dump() {
        return dumpMemberships(http);
    }

    static String membership(long worker, int rank, StorageTier tier, long block) {
        return Long.toUnsignedString(worker) + "/" + rank + "/" + tier.jsonName() + "/" + Long.toUnsignedString(block);
    }

    /**
     * The report row of a test that converged: batches sent and applied, and the engines' memberships against the
     * indexer's, as they are now.
     */
    ReliabilityReport.Row convergedRow(
            String test, String fault, String load, long inputs, long convergeMs, String note) {
        Set<String> expected = groundTruth();
        Set<String> found = dump();
        return new ReliabilityReport.Row(
                test,
                fault,
                load,
                inputs,
                batchesSent(),
                metric("dynamo_kvindexer_batches_applied_total"),
                expected.size(),
                found.size(),
                symmetricDifference(expected, found),
                convergeMs,
                note);
    }

    static long symmetricDifference(Set<String> a, Set<String> b) {
        long n = 0;
        for (String s : a) {
            if (!b.contains(s)) {
                n++;
            }
        }
        for (String s : b) {
            if (!a.contains(s)) {
                n++;
            }
        }
        return n;
    }

    /** Waits until the dump equals ground truth; returns the milliseconds it took. */
    long awaitConverged(Duration atMost) {
        long start = System.nanoTime();
        try {
            await().atMost(atMost)
                    .pollInterval(Duration.ofMillis(100))
                    .untilAsserted(() -> assertThat(dump()).isEqualTo(groundTruth()));
        } catch (ConditionTimeoutException e) {
            // what the listeners and the writers say is what tells a lost batch from a lost block
            System.out.println(
                    "not converged; /workers: " + http.get("/workers").body());
            Set<String> expected = groundTruth();
            Set<String> found = dump(); // one /dump for both lists: the two are of the same moment
            Set<String> missing = new java.util.TreeSet<>(expected);
            missing.removeAll(found);
            Set<String> extra = new java.util.TreeSet<>(found);
            extra.removeAll(expected);
            System.out.println("missing " + missing + " extra " + extra);
            for (String line : http.get("/metrics").body().split("\n")) {
                if ((line.startsWith("dynamo_kvindexer_") || line.startsWith("dynamo_kvrouter_kv_cache_event"))
                        && !line.startsWith("dynamo_kvindexer_query")
                        && !line.contains("request_duration")) {
                    System.out.println(line);
                }
            }
            throw e;
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /**
     * Queries {@code samples} prompts and compares every worker's rank-0 device score with the longest prefix its
     * engine holds; returns how many prompts were checked.
     */
    int assertQueriesMatchGroundTruth(int samples, long seed) {
        Random random = new Random(seed);
        Map<Long, Set<Long>> device = new HashMap<>();
        for (Engine e : engines) {
            device.put(e.workerId, e.sim.held(0, StorageTier.DEVICE));
        }
        for (int i = 0; i < samples; i++) {
            int[] tokens = prompt(random);
            long[] hashes = EngineSimulator.sequenceHashes(tokens, BLOCK, null);
            HttpTestClient.Response r = http.post(
                    "/query",
                    "{\"model_name\":\"" + MODEL + "\",\"token_ids\":"
                            + java.util.Arrays.toString(tokens).replace(" ", "") + "}");
            assertThat(r.status()).as(r.body()).isEqualTo(200);
            JsonNode scores = r.json().path("scores");
            for (Engine e : engines) {
                Set<Long> held = device.get(e.workerId);
                int blocks = 0;
                while (blocks < hashes.length && held.contains(hashes[blocks])) {
                    blocks++;
                }
                long got =
                        scores.path(Long.toUnsignedString(e.workerId)).path("0").asLong(0);
                assertThat(got).as("prompt %d, worker %d", i, e.workerId).isEqualTo((long) blocks * BLOCK);
            }
        }
        return samples;
    }

    /** Sum of a counter family in /metrics (all label sets). */
    long metric(String name) {
        long sum = 0;
        for (String line : http.get("/metrics").body().split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    long batchesSent() {
        return engines.stream().mapToLong(e -> e.batchesSent).sum();
    }

    @Override
    public void close() {
        engines.forEach(Engine::close);
        http.close();
    }
}
