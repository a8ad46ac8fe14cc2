package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A replica that is not Ready (a failing readiness probe, a restart that loads its snapshot) is not synced, yet it
 * may still hold the registrations it had. An engine pod deleted meanwhile is unregistered from the Ready replicas
 * at once, and from that one once it is Ready again: the status keeps the pod listed on it until then, or nobody
 * would know the registration is ours to remove. Replicas played by {@link CountingIndexer}s on the CRUD mock.
 */
class NotReadyReplicaEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(3));

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String NS = "notready";

    @Test
    void aPodDeletedWhileAReplicaIsNotReadyIsUnregisteredThereWhenItIsBack() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        List<CountingIndexer> replicas = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                replicas.add(new CountingIndexer(LoopbackCluster.replicaIp(i), port));
            }
            KvIndexer spec = Resources.kvIndexer(NS, "kv", 2, port);
            spec.getSpec().setSecurity(new Security(new Security.Tls(false, null), new Security.Auth(false)));
            KvIndexer kvi = harness.create(spec);
            for (int i = 0; i < 2; i++) {
                harness.startReplicaPod(kvi, i, LoopbackCluster.replicaIp(i));
            }
            harness.startEnginePod(NS, "vllm-a", VLLM, "10.6.0.1", true);
            harness.startEnginePod(NS, "vllm-b", VLLM, "10.6.0.2", true);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 16, 5557, null, 1));
            long a = InstanceIds.hashOf(NS, "vllm-a");
            long b = InstanceIds.hashOf(NS, "vllm-b");
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(replicas)
                            .allSatisfy(r -> assertThat(r.endpoints("llama")).containsOnlyKeys(a, b)));

            // kv-1 fails its readiness probe; its process runs on, holding what it held
            harness.replicaPod(kvi, 1, LoopbackCluster.replicaIp(1), false);
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(Resources.condition(
                                            harness.kvWorker(NS, "vllm")
                                                    .getStatus()
                                                    .conditions(),
                                            "Ready")
                                    .getMessage())
                            .contains("on all 1 ready replicas"));
            harness.deletePod(NS, "vllm-a");
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(
                            () -> assertThat(replicas.get(0).endpoints("llama")).containsOnlyKeys(b));
            assertThat(replicas.get(1).endpoints("llama")).containsOnlyKeys(a, b);

            // Ready again: the deleted pod's registration goes there too
            harness.startReplicaPod(kvi, 1, LoopbackCluster.replicaIp(1));
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(
                            () -> assertThat(replicas.get(1).endpoints("llama")).containsOnlyKeys(b));
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(
                                    harness.kvWorker(NS, "vllm").getStatus().pods())
                            .singleElement()
                            .satisfies(p -> assertThat(p.pod()).isEqualTo("vllm-b"))
                            .satisfies(p -> assertThat(p.registeredOn()).containsExactly("kv-0", "kv-1")));
            harness.deleteKvWorkers(NS, WAIT);
        } finally {
            replicas.forEach(CountingIndexer::close);
        }
    }
}
