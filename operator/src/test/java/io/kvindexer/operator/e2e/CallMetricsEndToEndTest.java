package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code kvindexer_operator_indexer_call_seconds} has a series per replica pod ({@code <namespace>/<pod>}): one
 * scaled away, or whose KvIndexer is deleted, takes its series with it, so the metric's size follows the replicas
 * that exist rather than every replica the operator ever called; KvIndexers of one name in two namespaces have
 * series of their own. Replicas played by {@link CountingIndexer}s on the CRUD mock API server.
 */
class CallMetricsEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(3));

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String NS = "callmetrics";

    /** The replica label values of the call latency series. */
    private static Set<String> replicasWithSeries() {
        Set<String> out = new TreeSet<>();
        harness.registry().scrape().stream()
                .filter(s -> s.getMetadata().getName().equals("kvindexer_operator_indexer_call_seconds"))
                .flatMap(s -> ((HistogramSnapshot) s).getDataPoints().stream())
                .forEach(d -> out.add(d.getLabels().get("replica")));
        return out;
    }

    @Test
    void aReplicaScaledAwayOrDeletedWithItsKvIndexerLeavesNoSeries() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(3));
        List<CountingIndexer> replicas = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                replicas.add(new CountingIndexer(LoopbackCluster.replicaIp(i), port));
            }
            KvIndexer spec = Resources.kvIndexer(NS, "kv", 3, port);
            spec.getSpec().setSecurity(new Security(new Security.Tls(false, null), new Security.Auth(false)));
            KvIndexer kvi = harness.create(spec);
            for (int i = 0; i < 3; i++) {
                harness.startReplicaPod(kvi, i, LoopbackCluster.replicaIp(i));
            }
            harness.startEnginePod(NS, "vllm-0", VLLM, "10.8.0.1", true);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 16, 5557, null, 1));
            long id = InstanceIds.hashOf(NS, "vllm-0");
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(replicas)
                            .allSatisfy(r -> assertThat(r.endpoints("llama")).containsKey(id)));
            await().atMost(WAIT)
                    .until(() -> replicasWithSeries().containsAll(Set.of(NS + "/kv-0", NS + "/kv-1", NS + "/kv-2")));

            // scaled down: the StatefulSet controller deletes the last pod
            harness.mergePatch(KvIndexer.class, NS, "kv", "{\"spec\":{\"replicas\":2}}");
            harness.deletePod(NS, "kv-2");
            replicas.remove(2).close();
            await().atMost(WAIT)
                    .untilAsserted(() -> assertThat(replicasWithSeries())
                            .contains(NS + "/kv-0", NS + "/kv-1")
                            .doesNotContain(NS + "/kv-2"));

            // deleted: garbage collection removes its pods after it
            harness.client()
                    .resources(KvIndexer.class)
                    .inNamespace(NS)
                    .withName("kv")
                    .delete();
            harness.deletePod(NS, "kv-0");
            harness.deletePod(NS, "kv-1");
            await().atMost(WAIT)
                    .untilAsserted(() ->
                            assertThat(replicasWithSeries()).doesNotContain(NS + "/kv-0", NS + "/kv-1", NS + "/kv-2"));
            harness.deleteKvWorkers(NS, WAIT);
        } finally {
            replicas.forEach(CountingIndexer::close);
        }
    }

    /**
     * Two KvIndexers named alike in two namespaces: pods of one name, yet a series each (the pod name alone mixed
     * their latencies into one series), and deleting one takes its own series only (with the pod name alone, the
     * other namespace's pod kept it for as long as it lived).
     */
    @Test
    void sameNamedKvIndexersInTwoNamespacesHaveSeriesOfTheirOwn() throws Exception {
        String a = "callmetrics-a";
        String b = "callmetrics-b";
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        try (CountingIndexer inA = new CountingIndexer(LoopbackCluster.replicaIp(0), port);
                CountingIndexer inB = new CountingIndexer(LoopbackCluster.replicaIp(1), port)) {
            for (String ns : List.of(a, b)) {
                KvIndexer spec = Resources.kvIndexer(ns, "kv", 1, port);
                spec.getSpec().setSecurity(new Security(new Security.Tls(false, null), new Security.Auth(false)));
                harness.create(spec);
            }
            harness.startReplicaPod(harness.kvIndexer(a, "kv"), 0, LoopbackCluster.replicaIp(0));
            harness.startReplicaPod(harness.kvIndexer(b, "kv"), 0, LoopbackCluster.replicaIp(1));
            await().atMost(WAIT)
                    .until(() -> inA.calls("GET /peers") > 0
                            && inB.calls("GET /peers") > 0
                            && replicasWithSeries().containsAll(Set.of(a + "/kv-0", b + "/kv-0")));

            harness.client()
                    .resources(KvIndexer.class)
                    .inNamespace(a)
                    .withName("kv")
                    .delete();
            harness.deletePod(a, "kv-0");
            await().atMost(WAIT)
                    .untilAsserted(() -> assertThat(replicasWithSeries())
                            .contains(b + "/kv-0")
                            .doesNotContain(a + "/kv-0"));
            harness.client()
                    .resources(KvIndexer.class)
                    .inNamespace(b)
                    .withName("kv")
                    .delete();
            harness.deletePod(b, "kv-0");
        }
    }
}
