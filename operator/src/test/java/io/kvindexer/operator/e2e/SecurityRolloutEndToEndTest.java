package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvIndexerStatus;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A change of {@code spec.security} rolls the replicas one at a time, and a rollout may stop half-way (a
 * PodDisruptionBudget, a new pod that does not start): the operator must keep managing the replicas not restarted
 * yet, as they still serve. Real indexer processes as the replicas, on the mock API server; the test plays the
 * StatefulSet controller and restarts only the highest ordinal with the new template. An engine pod added meanwhile
 * is registered on both replicas, neither the KvWorker nor the KvIndexer turns Degraded, and each replica's peer
 * list names the other in the scheme it serves.
 */
class SecurityRolloutEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(2));

    private static final String NS = "rollout";

    /**
     * Two changes, each rolled to replica 1 only: the token off (replica 0 still wants the token of the Secret it
     * mounts, kept while it does), then TLS off (replica 0 still serves HTTPS with its certificate and the token).
     */
    @Test
    void replicasNotRestartedYetStayManagedAsTheyServe() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(3));
        String peers = "kv-peers." + NS + ".svc:" + port;
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", 2, port);
            cluster.startEngine(NS, "vllm-0", VLLM, 0, zmqPort, null);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 4, zmqPort, null, 1));
            awaitRegistered(cluster, kvi, 1, zmqPort);

            rollReplica1(cluster, kvi, "{\"auth\":{\"enabled\":false}}", "--auth-token-file");
            cluster.startEngine(NS, "vllm-1", VLLM, 1, zmqPort, null);
            awaitRegistered(cluster, kvi, 2, zmqPort);
            awaitWell(cluster, kvi, 2, "https://kv-0." + peers, "https://kv-1." + peers);

            rollReplica1(cluster, kvi, "{\"tls\":{\"enabled\":false}}", "--tls-cert-file");
            assertThat(cluster.replica(kvi, 0).baseUrl().getScheme()).isEqualTo("https");
            assertThat(cluster.replica(kvi, 1).baseUrl().getScheme()).isEqualTo("http");
            cluster.startEngine(NS, "vllm-2", VLLM, 2, zmqPort, null);
            awaitRegistered(cluster, kvi, 3, zmqPort);
            awaitWell(cluster, kvi, 3, "https://kv-0." + peers, "http://kv-1." + peers);

            // the rollout ends: replica 0 restarts too, and is managed as it now serves
            harness.replicaPod(kvi, 0, LoopbackCluster.replicaIp(0), false);
            cluster.killReplica(NS, "kv", 0);
            cluster.startReplica(NS, "kv", 0);
            awaitRegistered(cluster, kvi, 3, zmqPort);
            awaitWell(cluster, kvi, 3, "http://kv-0." + peers, "http://kv-1." + peers);
            harness.deleteKvWorkers(NS, WAIT);
            harness.client().resources(KvIndexer.class).inNamespace(NS).delete();
        }
    }

    /**
     * Merges {@code security} into the spec, waits until {@code flag} left the template, and plays the StatefulSet
     * controller's first step: replica 1 restarts with the new template, replica 0 keeps running the old one.
     */
    private static void rollReplica1(LoopbackCluster cluster, KvIndexer kvi, String security, String flag)
            throws Exception {
        harness.mergePatch(KvIndexer.class, NS, "kv", "{\"spec\":{\"security\":" + security + "}}");
        await().atMost(WAIT)
                .until(() -> !harness.indexerContainer(NS, "kv").getArgs().contains(flag));
        harness.replicaPod(kvi, 1, LoopbackCluster.replicaIp(1), false);
        cluster.killReplica(NS, "kv", 1);
        cluster.startReplica(NS, "kv", 1);
    }

    /**
     * Each replica's peer list names the other as it serves; the KvWorker has {@code engines} pods registered and
     * is not Degraded, nor is the KvIndexer, whose status lists each replica's URL as it serves.
     */
    private static void awaitWell(LoopbackCluster cluster, KvIndexer kvi, int engines, String url0, String url1) {
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> cluster.http.peers(cluster.replica(kvi, 0)).equals(List.of(url1))
                        && cluster.http.peers(cluster.replica(kvi, 1)).equals(List.of(url0)));
        await().atMost(WAIT).untilAsserted(() -> {
            KvWorker w = harness.kvWorker(NS, "vllm");
            assertThat(w.getStatus().registeredPods()).isEqualTo(engines);
            assertThat(condition(w.getStatus().conditions(), "Degraded")).isEqualTo("False");
            KvIndexerStatus s = harness.kvIndexer(NS, "kv").getStatus();
            assertThat(condition(s.conditions(), "Degraded")).isEqualTo("False");
            assertThat(s.pods()).extracting(KvIndexerStatus.ReplicaStatus::url).containsExactly(url0, url1);
        });
    }

    /** Engines 0 to {@code engines - 1} registered on both replicas, and nothing else. */
    private static void awaitRegistered(LoopbackCluster cluster, KvIndexer kvi, int engines, int zmqPort) {
        Map<String, Integer> pods = new java.util.HashMap<>();
        for (int k = 0; k < engines; k++) {
            pods.put("vllm-" + k, k);
        }
        Map<Long, String> expected = LoopbackCluster.engineEndpoints(NS, pods, zmqPort);
        for (int i = 0; i < 2; i++) {
            int ordinal = i;
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> cluster.registrations(cluster.replica(kvi, ordinal), "llama")
                            .equals(expected));
        }
    }

    private static String condition(List<Condition> conditions, String type) {
        return Resources.condition(conditions, type).getStatus();
    }
}
