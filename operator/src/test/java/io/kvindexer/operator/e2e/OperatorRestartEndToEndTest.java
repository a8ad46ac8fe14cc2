package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the operator keeps in memory only (how a deleted KvIndexer's replicas were reached) and what an operator
 * started afterwards still gets right: a KvIndexer deleted while the operator was down, its replica left running
 * ({@code --cascade=orphan}), and an engine pod gone meanwhile. The new operator cannot reach that replica, leaves
 * it as it is, and keeps both pods listed as its KvWorker's own; a KvIndexer created again under the name takes the
 * replica back, and the registration of the pod that went is removed there. Real indexer replica, engine pods as
 * pod objects, on the CRUD mock API server.
 */
class OperatorRestartEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(2));

    private static final String NS = "restart";

    @Test
    void aKvIndexerDeletedWhileTheOperatorWasDownIsCleanedOnceCreatedAgain() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(1));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(2));
        long a = InstanceIds.hashOf(NS, "vllm-a");
        long b = InstanceIds.hashOf(NS, "vllm-b");
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", 1, port);
            harness.startEnginePod(NS, "vllm-a", VLLM, LoopbackCluster.engineIp(0), true);
            harness.startEnginePod(NS, "vllm-b", VLLM, LoopbackCluster.engineIp(1), true);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 16, zmqPort, null, 1));
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> held(cluster, kvi).equals(Set.of(a, b)));

            harness.close(); // the operator is down (an upgrade, a node drained)
            harness.client()
                    .resources(KvIndexer.class)
                    .inNamespace(NS)
                    .withName("kv")
                    .withPropagationPolicy(DeletionPropagation.ORPHAN)
                    .delete();
            harness.deletePod(NS, "vllm-b");

            try (OperatorHarness restarted = new OperatorHarness(harness.client(), Duration.ofSeconds(2))) {
                await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                    var status = harness.kvWorker(NS, "vllm").getStatus();
                    assertThat(Resources.condition(status.conditions(), "Ready").getReason())
                            .isEqualTo("IndexerNotFound");
                    assertThat(status.pods())
                            .as("both still ours to remove")
                            .extracting(PodRegistration::pod)
                            .containsExactly("vllm-a", "vllm-b");
                });
                assertThat(held(cluster, kvi)).as("not reached: left as it was").isEqualTo(Set.of(a, b));

                harness.create(Resources.kvIndexer(NS, "kv", 1, port));
                await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                    assertThat(held(cluster, harness.kvIndexer(NS, "kv"))).isEqualTo(Set.of(a));
                    assertThat(harness.kvWorker(NS, "vllm").getStatus().pods())
                            .singleElement()
                            .satisfies(p -> assertThat(p.registeredOn()).containsExactly("kv-0"));
                });
                restarted.deleteKvWorkers(NS, WAIT);
            }
        }
    }

    /** The instances replica 0 holds for model llama. */
    private static Set<Long> held(LoopbackCluster cluster, KvIndexer kvi) {
        Map<Long, String> found = new HashMap<>(cluster.registrations(cluster.replica(kvi, 0), "llama"));
        return found.keySet();
    }
}
