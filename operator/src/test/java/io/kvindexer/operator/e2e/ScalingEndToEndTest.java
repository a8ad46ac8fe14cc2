package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.e2e.LoopbackCluster.engineIp;
import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scaling 2 → 3 → 5 → 2 with the real operator and real indexer replicas: the StatefulSet's pod template never
 * changes (so the StatefulSet controller restarts no running replica), each new replica answers /ready only once it
 * recovered the engines' blocks from a Ready peer (the engine has no replay endpoint and publishes nothing new, so
 * a peer's /dump is the only way to get them), and scaled-away replicas leave every peer list.
 */
class ScalingEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(3));

    private static final String NS = "scaling";
    private static final int MAX = 5;

    /** The replicas the engine pod is registered on, by the KvWorker's status. */
    private static List<String> registeredOn() {
        return harness.kvWorker(NS, "vllm").getStatus().pods().getFirst().registeredOn();
    }

    private void scaleTo(int replicas, PodTemplateSpec unchanged) {
        harness.mergePatch(KvIndexer.class, NS, "kv", "{\"spec\":{\"replicas\":" + replicas + "}}");
        await().atMost(WAIT).untilAsserted(() -> {
            StatefulSet sts = harness.statefulSet(NS, "kv");
            assertThat(sts.getSpec().getReplicas()).isEqualTo(replicas);
            assertThat(sts.getSpec().getTemplate())
                    .as("pod template after scaling to %d", replicas)
                    .isEqualTo(unchanged);
        });
    }

    private void awaitPeersInStep(LoopbackCluster cluster, KvIndexer kvi, int replicas, int port) {
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            for (int i = 0; i < replicas; i++) {
                int self = i;
                assertThat(cluster.http.peers(cluster.replica(kvi, i)))
                        .as("peers of kv-%d", i)
                        .containsExactlyInAnyOrderElementsOf(IntStream.range(0, replicas)
                                .filter(j -> j != self)
                                .mapToObj(j -> "https://kv-" + j + ".kv-peers." + NS + ".svc:" + port)
                                .toList());
            }
            assertThat(harness.kvIndexer(NS, "kv").getStatus().ready()).isEqualTo(replicas + "/" + replicas);
            assertThat(harness.kvIndexer(NS, "kv").getStatus().replicas()).isEqualTo(replicas);
        });
    }

    @Test
    void scalingTwoThreeFiveTwoNeverTouchesARunningReplica() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(MAX));
        int zmqPort = LoopbackCluster.freePort(engineIp(0));
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", 2, port);
            Map<Integer, IndexerApp> running = new HashMap<>();
            running.put(0, cluster.runningReplica(NS, "kv", 0));
            running.put(1, cluster.runningReplica(NS, "kv", 1));
            EngineSimulator engine = cluster.startEngine(NS, "vllm-a", Map.of("app", "vllm"), 0, zmqPort, null);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", Map.of("app", "vllm"), "llama", 4, zmqPort, null, 1));
            long id = InstanceIds.hashOf(NS, "vllm-a");
            await().atMost(WAIT).until(() -> engine.subscriptions() >= 2);
            int[] prompt = IntStream.rangeClosed(1, 16).toArray();
            engine.storeSequence(prompt, 4).get();
            // The count above is of subscribe messages, and a SUB that reconnected sends a second one: a replica
            // whose SUB joined after the publish missed it, and with no replay endpoint it never gets it back.
            // Publishing the same blocks again is idempotent, so repeat it until both replicas hold them.
            await().atMost(WAIT)
                    .pollInterval(Duration.ofSeconds(2))
                    .ignoreExceptions()
                    .until(() -> {
                        boolean both = cluster.matched(cluster.replica(kvi, 0), "llama", prompt, id) == 16
                                && cluster.matched(cluster.replica(kvi, 1), "llama", prompt, id) == 16;
                        if (!both) {
                            engine.storeSequence(prompt, 4).get();
                        }
                        return both;
                    });
            PodTemplateSpec template = harness.statefulSet(NS, "kv").getSpec().getTemplate();
            assertThat(template.getSpec().getContainers().getFirst().getArgs())
                    .containsSubsequence("--peers-dns", "kv-peers." + NS + ".svc:" + port);

            int size = 2;
            for (int target : List.of(3, 5)) {
                scaleTo(target, template);
                for (int i = size; i < target; i++) {
                    running.put(i, cluster.startReplica(NS, "kv", i)); // returns once /ready answered 200
                    // Ready means recovered: the blocks are there at once, from a peer's /dump
                    assertThat(cluster.matched(cluster.replica(kvi, i), "llama", prompt, id))
                            .as("kv-%d answers from the recovered tree as soon as it is Ready", i)
                            .isEqualTo(16);
                }
                size = target;
                awaitPeersInStep(cluster, kvi, size, port);
                int expected = size;
                await().atMost(WAIT)
                        .ignoreExceptions()
                        .untilAsserted(() -> assertThat(registeredOn()).hasSize(expected));
            }

            scaleTo(2, template);
            for (int i = 4; i >= 2; i--) {
                cluster.removeReplica(NS, "kv", i); // highest ordinal first, as the StatefulSet controller does
                running.remove(i);
            }
            awaitPeersInStep(cluster, kvi, 2, port);
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(registeredOn()).containsExactly("kv-0", "kv-1"));
            // the two replicas that ran throughout are the same processes and still hold everything
            for (int i = 0; i < 2; i++) {
                assertThat(cluster.runningReplica(NS, "kv", i)).isSameAs(running.get(i));
                assertThat(cluster.matched(cluster.replica(kvi, i), "llama", prompt, id))
                        .isEqualTo(16);
                assertThat(cluster.http.workers(cluster.replica(kvi, i), "llama", "default"))
                        .extracting(RegisteredWorker::instanceId)
                        .containsExactly(id);
            }
            harness.deleteKvWorkers(NS, WAIT);
            harness.client().resources(KvIndexer.class).inNamespace(NS).delete();
        }
    }
}
