package io.kvindexer.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.operator.client.IndexerClientException;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A rolling upgrade (a flag changes in the KvIndexer) with engines publishing throughout. The test plays the
 * StatefulSet controller's RollingUpdate: replicas restart one at a time from the highest ordinal down, each with
 * the new template, the next only once the previous is Ready again. A watcher samples every replica the whole time:
 * at least {@code replicas - 1} answer {@code /query} at every sample, and every answer comes from a complete
 * index (a canary sequence every engine stored before the upgrade is matched in full; a recovering replica answers
 * 503). At the end every replica's {@code /dump} equals what the engines hold. A {@code /ready} 503 on a replica
 * that answers queries (while the operator registers engines) is counted and printed: readiness that does not flap
 * is the indexer's side of issue 13.
 */
class RollingUpgradeEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(3));

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String NS = "rolling";
    private static final int REPLICAS = 3;
    private static final int ENGINES = 2;
    private static final int BLOCK = 4;

    /** {@code instance/block} of every block a replica's /dump holds on rank 0. */
    private static Set<String> dump(LoopbackCluster cluster, IndexerEndpoint replica) {
        Set<String> out = new HashSet<>();
        cluster.http
                .dump(replica)
                .properties()
                .forEach(model -> model.getValue().path("events").forEach(ev -> {
                    String worker = ev.get("worker_id").bigIntegerValue().toString();
                    for (JsonNode b :
                            ev.path("event").path("data").path("stored").path("blocks")) {
                        out.add(worker + "/"
                                + Long.toUnsignedString(
                                        b.get("block_hash").bigIntegerValue().longValue()));
                    }
                }));
        return out;
    }

    private static Set<String> groundTruth(Map<String, EngineSimulator> engines) {
        Set<String> out = new HashSet<>();
        engines.forEach((pod, sim) -> sim.groundTruth()
                .forEach((holder, blocks) -> blocks.forEach(b ->
                        out.add(Long.toUnsignedString(InstanceIds.hashOf(NS, pod)) + "/" + Long.toUnsignedString(b)))));
        return out;
    }

    /** The {@code scores} of a 200 answer to {@code /query}, or null (503, unreachable). */
    private static JsonNode scores(LoopbackCluster cluster, IndexerEndpoint replica, int[] tokens) {
        try {
            return cluster.scores(replica, "llama", tokens);
        } catch (IndexerClientException e) {
            return null;
        }
    }

    /** 200 → true, 503 → false, unreachable → null. */
    private static Boolean ready(LoopbackCluster cluster, IndexerEndpoint replica) {
        try {
            return cluster.http.ready(replica);
        } catch (IndexerClientException e) {
            return null;
        }
    }

    @Test
    void aRollingUpgradeKeepsReplicasMinusOneAnsweringAndEndsWithEveryDumpEqualToTheEngines() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(REPLICAS));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(ENGINES));
        int replayPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(ENGINES));
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", REPLICAS, port);
            Map<String, EngineSimulator> engines = new java.util.TreeMap<>();
            for (int k = 0; k < ENGINES; k++) {
                engines.put(
                        "vllm-" + k,
                        cluster.startEngine(NS, "vllm-" + k, Map.of("app", "vllm"), k, zmqPort, replayPort));
            }
            harness.create(Resources.kvWorker(
                    NS, "vllm", "kv", Map.of("app", "vllm"), "llama", BLOCK, zmqPort, replayPort, 1));
            for (EngineSimulator sim : engines.values()) {
                await().atMost(WAIT).until(() -> sim.subscriptions() >= REPLICAS);
            }
            // the canary: stored by every engine before the upgrade, so a complete index always matches all of it
            int[] canary =
                    IntStream.rangeClosed(1, 4 * BLOCK).map(t -> 900_000 + t).toArray();
            for (EngineSimulator sim : engines.values()) {
                sim.storeSequence(canary, BLOCK).join();
            }
            for (int i = 0; i < REPLICAS; i++) {
                IndexerEndpoint r = cluster.replica(kvi, i);
                await().atMost(WAIT)
                        .ignoreExceptions()
                        .untilAsserted(() -> assertThat(scores(cluster, r, canary)
                                        .path(Long.toUnsignedString(InstanceIds.hashOf(NS, "vllm-1")))
                                        .path("0")
                                        .asInt())
                                .isEqualTo(canary.length));
            }

            // engines publish for the whole upgrade
            AtomicBoolean publishing = new AtomicBoolean(true);
            AtomicInteger batches = new AtomicInteger();
            Thread publisher = Thread.ofVirtual().start(() -> {
                Random random = new Random(13);
                while (publishing.get()) {
                    for (EngineSimulator sim : engines.values()) {
                        int[] tokens = IntStream.range(0, BLOCK * (1 + random.nextInt(4)))
                                .map(i -> random.nextInt(50_000))
                                .toArray();
                        sim.storeSequence(tokens, BLOCK).join();
                        batches.incrementAndGet();
                    }
                    try {
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });

            // the watcher: every /query a replica answers must come from a complete index (the canary that every
            // engine stored before the upgrade is matched in full), and at least replicas - 1 answer at every sample
            AtomicBoolean watching = new AtomicBoolean(true);
            List<String> violations = new CopyOnWriteArrayList<>();
            AtomicInteger samples = new AtomicInteger();
            AtomicInteger notAnswering = new AtomicInteger();
            AtomicInteger readinessFlaps = new AtomicInteger();
            Thread watcher = Thread.ofVirtual().start(() -> {
                while (watching.get()) {
                    int serving = 0;
                    for (int i = 0; i < REPLICAS; i++) {
                        IndexerEndpoint r = cluster.replica(kvi, i);
                        JsonNode scores = scores(cluster, r, canary);
                        if (scores == null) {
                            notAnswering.incrementAndGet(); // 503 while recovering, or the process is gone
                            if (Boolean.FALSE.equals(ready(cluster, r))
                                    && cluster.runningReplica(NS, "kv", i) != null
                                    && scores(cluster, r, canary) != null) {
                                readinessFlaps.incrementAndGet();
                            }
                            continue;
                        }
                        for (String pod : engines.keySet()) {
                            int matched = scores.path(Long.toUnsignedString(InstanceIds.hashOf(NS, pod)))
                                    .path("0")
                                    .asInt(0);
                            if (matched != canary.length) {
                                violations.add("kv-" + i + " answered /query from an incomplete index: " + pod
                                        + " matched " + matched + " of " + canary.length);
                            }
                        }
                        serving++;
                    }
                    if (serving < REPLICAS - 1) {
                        violations.add("only " + serving + " replicas answering /query");
                    }
                    samples.incrementAndGet();
                }
            });

            // the upgrade: a flag changes, so the template changes
            harness.mergePatch(KvIndexer.class, NS, "kv", "{\"spec\":{\"threads\":2}}");
            await().atMost(WAIT)
                    .until(() -> harness.indexerContainer(NS, "kv").getArgs().contains("2"));
            List<Integer> order = new ArrayList<>();
            for (int i = REPLICAS - 1; i >= 0; i--) {
                // the kubelet stops the old container: the pod turns unready, the process goes
                harness.replicaPod(kvi, i, LoopbackCluster.replicaIp(i), false);
                cluster.killReplica(NS, "kv", i);
                cluster.startReplica(NS, "kv", i); // the new template's args; returns once Ready
                int ordinal = i;
                await().atMost(WAIT)
                        .ignoreExceptions()
                        .untilAsserted(() -> assertThat(
                                        cluster.http.workers(cluster.replica(kvi, ordinal), "llama", "default"))
                                .extracting(RegisteredWorker::instanceId)
                                .as("registrations back on kv-%d", ordinal)
                                .hasSize(ENGINES));
                order.add(i);
            }
            publishing.set(false);
            publisher.join();
            watching.set(false);
            watcher.join();

            assertThat(order).containsExactly(2, 1, 0);
            assertThat(batches.get()).as("engines published during the upgrade").isGreaterThan(20);
            assertThat(samples.get()).as("watcher samples").isGreaterThan(10);
            assertThat(violations).as("availability and readiness violations").isEmpty();
            Set<String> truth = groundTruth(engines);
            assertThat(truth).isNotEmpty();
            for (int i = 0; i < REPLICAS; i++) {
                IndexerEndpoint r = cluster.replica(kvi, i);
                await().atMost(WAIT)
                        .pollInterval(Duration.ofMillis(200))
                        .untilAsserted(() -> assertThat(dump(cluster, r))
                                .as("/dump of %s vs the engines", r.name())
                                .isEqualTo(truth));
            }
            assertThat(notAnswering.get())
                    .as("the watcher saw the restarts (replicas not answering)")
                    .isPositive();
            System.out.println("rolling upgrade: " + batches.get() + " batches published, " + samples.get()
                    + " watcher samples (" + notAnswering.get() + " replica samples not answering), " + truth.size()
                    + " blocks on every replica, " + readinessFlaps.get() + " samples of /ready 503 on a replica"
                    + " that answered /query");
            harness.deleteKvWorkers(NS, WAIT);
            harness.client().resources(KvIndexer.class).inNamespace(NS).delete();
        }
    }
}
