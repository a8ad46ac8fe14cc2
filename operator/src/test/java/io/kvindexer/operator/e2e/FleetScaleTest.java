package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator at fleet size: engine pods × 3 replicas on the CRUD mock API server, the replicas played by {@link
 * CountingIndexer}s. The fleet converges to the right registrations on every replica, and then a change of one pod
 * costs the calls that change needs on each replica, whatever the fleet's size (no read of the fleet): one unregister
 * for a deleted pod or one relabelled out of the selector, one unregister and one register for a moved one. Prints
 * the time to converge and the calls. 200 pods by default, to keep the suite short; the figure of docs/benchmarks.md
 * is {@code -Dkvindexer.fleet.pods=1000}.
 */
class FleetScaleTest {
    // no periodic resync during the test: every reconcile it sees comes from a change
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofHours(1));

    private static final String NS = "fleet";
    private static final int REPLICAS = 3;
    private static final int ZMQ_PORT = 5557;
    private static final Duration WAIT = Duration.ofSeconds(180);

    private static String ip(int i) {
        return "10.1." + (i / 250) + "." + (i % 250 + 1);
    }

    private static Map<Long, String> expected(Map<String, String> podIps) {
        Map<Long, String> out = new HashMap<>();
        podIps.forEach((pod, ip) -> out.put(InstanceIds.hashOf(NS, pod), "tcp://" + ip + ":" + ZMQ_PORT));
        return out;
    }

    private static void awaitConverged(List<CountingIndexer> replicas, Map<String, String> podIps) {
        awaitConverged(replicas, podIps, WAIT);
    }

    private static void awaitConverged(List<CountingIndexer> replicas, Map<String, String> podIps, Duration wait) {
        Map<Long, String> want = expected(podIps);
        await().atMost(wait)
                .pollInterval(Duration.ofMillis(100))
                .ignoreExceptions()
                .untilAsserted(() -> {
                    for (CountingIndexer r : replicas) {
                        assertThat(r.endpoints("llama")).isEqualTo(want);
                    }
                    assertThat(harness.kvWorker(NS, "vllm").getStatus().registeredPods())
                            .isEqualTo(podIps.size());
                });
    }

    /** Every replica received exactly {@code expected} (method and path → calls) since the counters were reset. */
    private static void assertCalls(List<CountingIndexer> replicas, Map<String, Integer> expected) {
        for (CountingIndexer r : replicas) {
            Map<String, Integer> registry = new HashMap<>(r.calls());
            registry.keySet().retainAll(List.of("GET /workers", "POST /register", "POST /unregister"));
            assertThat(registry).isEqualTo(expected);
        }
    }

    @Test
    void aFleetConvergesAndAChangeOfOnePodCostsItsOwnCallsOnly() throws Exception {
        int pods = Integer.getInteger("kvindexer.fleet.pods", 200);
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(REPLICAS));
        List<CountingIndexer> replicas = new ArrayList<>();
        try {
            for (int i = 0; i < REPLICAS; i++) {
                replicas.add(new CountingIndexer(LoopbackCluster.replicaIp(i), port));
            }
            KvIndexer spec = Resources.kvIndexer(NS, "kv", REPLICAS, port);
            // the stand-in replicas speak plain HTTP without a token: this test counts calls, not handshakes
            spec.getSpec().setSecurity(new Security(new Security.Tls(false, null), new Security.Auth(false)));
            KvIndexer kvi = harness.create(spec);
            for (int i = 0; i < REPLICAS; i++) {
                harness.startReplicaPod(kvi, i, LoopbackCluster.replicaIp(i));
            }
            Map<String, String> podIps = new HashMap<>();
            long t0 = System.nanoTime();
            IntStream.range(0, pods).parallel().forEach(i -> {
                String name = "vllm-" + i;
                harness.client()
                        .pods()
                        .inNamespace(NS)
                        .resource(pod(name, ip(i)))
                        .create();
            });
            IntStream.range(0, pods).forEach(i -> podIps.put("vllm-" + i, ip(i)));
            long created = System.nanoTime();

            harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 16, ZMQ_PORT, null, 1));
            awaitConverged(replicas, podIps);
            long converged = System.nanoTime();
            Map<String, Integer> initial = replicas.getFirst().calls();
            replicas.forEach(CountingIndexer::resetCalls);

            // one pod deleted: one unregister per replica, nothing read
            harness.deletePod(NS, "vllm-7");
            podIps.remove("vllm-7");
            awaitConverged(replicas, podIps);
            long deleted = System.nanoTime();
            assertCalls(replicas, Map.of("POST /unregister", 1));
            replicas.forEach(CountingIndexer::resetCalls);

            // one pod moved to another address: unregistered there, registered here
            harness.upsertPod(pod("vllm-8", "10.9.0.8").getMetadata(), "10.9.0.8", true);
            podIps.put("vllm-8", "10.9.0.8");
            awaitConverged(replicas, podIps);
            long moved = System.nanoTime();
            assertCalls(replicas, Map.of("POST /unregister", 1, "POST /register", 1));
            replicas.forEach(CountingIndexer::resetCalls);

            // one pod relabelled out of the selector (taken out of rotation, still running): unregistered at once,
            // with no resync to find it (the pod's new labels match no KvWorker; the one whose status lists it is told)
            harness.mergePatch(Pod.class, NS, "vllm-9", "{\"metadata\":{\"labels\":{\"app\":\"quarantined\"}}}");
            podIps.remove("vllm-9");
            awaitConverged(replicas, podIps, Duration.ofSeconds(30));
            long relabelled = System.nanoTime();
            assertCalls(replicas, Map.of("POST /unregister", 1));

            System.out.printf(
                    "operator fleet: %d engine pods x %d replicas: pods created in %d ms; converged %d ms after the"
                            + " KvWorker was created (replica kv-0 received %s); a deleted pod settled in %d ms with"
                            + " 1 call per replica, a moved pod in %d ms with 2 calls per replica, a relabelled pod in"
                            + " %d ms with 1%n",
                    pods,
                    REPLICAS,
                    (created - t0) / 1_000_000,
                    (converged - created) / 1_000_000,
                    initial,
                    (deleted - converged) / 1_000_000,
                    (moved - deleted) / 1_000_000,
                    (relabelled - moved) / 1_000_000);
            harness.deleteKvWorkers(NS, WAIT);
            assertThat(replicas).allSatisfy(r -> assertThat(r.registrations).isEmpty());
        } finally {
            replicas.forEach(CountingIndexer::close);
        }
    }

    private static Pod pod(String name, String ip) {
        return OperatorHarness.pod(
                new ObjectMetaBuilder()
                        .withName(name)
                        .withNamespace(NS)
                        .withLabels(VLLM)
                        .build(),
                ip,
                true);
    }
}
