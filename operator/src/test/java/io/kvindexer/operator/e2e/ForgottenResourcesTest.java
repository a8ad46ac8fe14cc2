package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the operator remembers per KvIndexer, KvWorker and replica pod (the last token a replica accepted, how a
 * KvIndexer's replicas were reached, its certificate Secret's CAs, back-off counts, Events written, what a replica
 * holds) is forgotten once they are deleted: before, about a kilobyte stayed per deleted resource for as long as the
 * operator ran. One KvIndexer with a real TLS and token replica, and several whose replica pods cannot be reached
 * (back-off, warnings); all created and deleted, after which nothing is remembered.
 */
class ForgottenResourcesTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(2));

    private static final String NS = "forgotten";
    private static final int UNREACHABLE = 3;

    @Test
    void nothingIsRememberedOfDeletedResources() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(1));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(1));
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", 1, port);
            cluster.startEngine(NS, "vllm-0", VLLM, 0, zmqPort, null);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 4, zmqPort, null, 1));
            for (int i = 0; i < UNREACHABLE; i++) {
                String name = "gone-" + i;
                KvIndexer gone = harness.create(Resources.kvIndexer(NS, name, 1, port));
                await().atMost(WAIT).until(() -> harness.statefulSet(NS, name) != null);
                // Ready at an address where nothing listens: every call fails
                harness.replicaPod(
                        gone,
                        0,
                        "127.0.0." + (30 + i),
                        true,
                        harness.statefulSet(NS, name).getSpec().getTemplate().getSpec());
                harness.create(Resources.kvWorker(NS, "w-" + i, name, VLLM, "llama", 4, zmqPort, null, 1));
            }
            // per KvIndexer its CA and failures, per KvWorker its failures, Events and replicas reached, ...
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> cluster.registrations(cluster.replica(kvi, 0), "llama")
                                            .size()
                                    == 1
                            && harness.retention().size() >= 4 * UNREACHABLE);
            int remembered = harness.retention().size();

            for (int i = 0; i < UNREACHABLE; i++) { // no replica left: their KvWorkers' finalizers have nothing to do
                harness.deletePod(NS, "gone-" + i + "-0");
            }
            harness.deleteKvWorkers(NS, WAIT);
            harness.client().resources(KvIndexer.class).inNamespace(NS).delete();
            // the mock API server collects no garbage: the replica pod goes as its owner would take it
            harness.deletePod(NS, IndexerNames.pod(kvi, 0));
            await().atMost(WAIT)
                    .untilAsserted(() -> assertThat(harness.retention().size())
                            .as("entries remembered of deleted resources (were %d)", remembered)
                            .isZero());
        }
    }
}
