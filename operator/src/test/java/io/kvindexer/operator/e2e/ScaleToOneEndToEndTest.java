package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A KvIndexer scaled 3 → 1 → 3, then a replica whose process dies and comes back: peer lists, registrations, the
 * PodDisruptionBudget and the status follow (docs/kubernetes.md, "Scaling").
 */
class ScaleToOneEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(3));

    private static final String NS = "scale-to-one";

    private static void scaleTo(int replicas) {
        harness.mergePatch(KvIndexer.class, NS, "kv", "{\"spec\":{\"replicas\":" + replicas + "}}");
        await().atMost(WAIT).until(() -> harness.statefulSet(NS, "kv").getSpec().getReplicas() == replicas);
    }

    private static boolean pdb() {
        return !harness.client()
                .policy()
                .v1()
                .podDisruptionBudget()
                .inNamespace(NS)
                .list()
                .getItems()
                .isEmpty();
    }

    private static void awaitInStep(LoopbackCluster cluster, KvIndexer kvi, int replicas, int port, long id) {
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            for (int i = 0; i < replicas; i++) {
                int self = i;
                assertThat(cluster.http.peers(cluster.replica(kvi, i)))
                        .as("peers of kv-%d", i)
                        .containsExactlyInAnyOrderElementsOf(IntStream.range(0, replicas)
                                .filter(j -> j != self)
                                .mapToObj(j -> "https://kv-" + j + ".kv-peers." + NS + ".svc:" + port)
                                .toList());
                assertThat(cluster.http.workers(cluster.replica(kvi, i), "llama", "default"))
                        .extracting(RegisteredWorker::instanceId)
                        .containsExactly(id);
            }
            assertThat(harness.kvIndexer(NS, "kv").getStatus().ready()).isEqualTo(replicas + "/" + replicas);
            assertThat(harness.kvWorker(NS, "vllm")
                            .getStatus()
                            .pods()
                            .getFirst()
                            .registeredOn())
                    .hasSize(replicas);
            assertThat(pdb()).as("PodDisruptionBudget at %d replicas", replicas).isEqualTo(replicas > 1);
        });
    }

    @Test
    void threeOneThreeAndARestartedReplica() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(3));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIp(0));
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", 3, port);
            harness.startEnginePod(NS, "vllm-a", Map.of("app", "vllm"), LoopbackCluster.engineIp(0), true);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", Map.of("app", "vllm"), "llama", 4, zmqPort, null, 1));
            long id = InstanceIds.hashOf(NS, "vllm-a");
            awaitInStep(cluster, kvi, 3, port, id);

            scaleTo(1);
            cluster.removeReplica(NS, "kv", 2);
            cluster.removeReplica(NS, "kv", 1);
            awaitInStep(cluster, kvi, 1, port, id);

            scaleTo(3);
            cluster.startReplica(NS, "kv", 1);
            cluster.startReplica(NS, "kv", 2);
            awaitInStep(cluster, kvi, 3, port, id);

            // kv-1's process dies and the kubelet restarts it: not Ready until recovered, then registered again
            cluster.killReplica(NS, "kv", 1);
            harness.replicaPod(kvi, 1, LoopbackCluster.replicaIp(1), false);
            cluster.startReplica(NS, "kv", 1); // returns once /ready answered 200
            assertThat(cluster.http.workers(cluster.replica(kvi, 1), "llama", "default"))
                    .as("a replica is Ready only once it recovered the registrations from a peer")
                    .extracting(RegisteredWorker::instanceId)
                    .containsExactly(id);
            awaitInStep(cluster, kvi, 3, port, id);

            harness.deleteKvWorkers(NS, WAIT);
            for (int i = 0; i < 3; i++) {
                assertThat(cluster.http.workers(cluster.replica(kvi, i), "llama", "default"))
                        .as("kv-%d after the KvWorker was deleted", i)
                        .isEmpty();
            }
            harness.client().resources(KvIndexer.class).inNamespace(NS).delete();
        }
    }
}
