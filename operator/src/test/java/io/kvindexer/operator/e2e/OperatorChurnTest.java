package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * 200 rounds of engine pod churn (create, delete, IP change, readiness flapping) against the real operator on the
 * CRUD mock API server with two real indexer replicas: after each settle, every replica's registrations equal the
 * Ready pods (instance id and endpoint). The churn itself is API writes with no waits in between, so the operator
 * sees bursts of events, as during a rollout.
 */
class OperatorChurnTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(2));

    private static final int PODS = 6;
    private static final int IPS = 4;

    /** What the test believes each engine pod is: its IP slot and readiness; absent = deleted. */
    private record PodState(int ip, boolean ready) {}

    @Test
    void everyReplicaFollowsTheReadyPodsThroughChurn() throws Exception {
        String ns = "churn";
        int rounds = Boolean.getBoolean("kvindexer.soak") ? 2_000 : 200;
        String[] ips = LoopbackCluster.engineIps(IPS);
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        int zmqPort = LoopbackCluster.freePort(ips);
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(ns, "kv", 2, port);
            var worker = Resources.kvWorker(ns, "vllm", "kv", VLLM, "llama", 4, zmqPort, null, 1);
            worker.getSpec().setUnregisterAfterSeconds(0); // a flap unregisters at once: registered = Ready pods
            harness.create(worker);

            Random random = new Random(7);
            Map<String, PodState> pods = new HashMap<>();
            Map<String, Integer> actions = new TreeMap<>();
            long settleMillis = 0;
            int settles = 0;
            for (int round = 1; round <= rounds; round++) {
                String pod = "vllm-" + random.nextInt(PODS);
                PodState now = pods.get(pod);
                String action;
                if (now == null) {
                    now = new PodState(random.nextInt(IPS), random.nextInt(4) != 0);
                    harness.startEnginePod(ns, pod, VLLM, ips[now.ip()], now.ready());
                    pods.put(pod, now);
                    action = "create";
                } else {
                    switch (random.nextInt(3)) {
                        case 0 -> {
                            harness.deletePod(ns, pod);
                            pods.remove(pod);
                            action = "delete";
                        }
                        case 1 -> {
                            now = new PodState((now.ip() + 1 + random.nextInt(IPS - 1)) % IPS, now.ready());
                            harness.startEnginePod(ns, pod, VLLM, ips[now.ip()], now.ready());
                            pods.put(pod, now);
                            action = "ip-change";
                        }
                        default -> {
                            now = new PodState(now.ip(), !now.ready());
                            harness.startEnginePod(ns, pod, VLLM, ips[now.ip()], now.ready());
                            pods.put(pod, now);
                            action = "readiness-flap";
                        }
                    }
                }
                actions.merge(action, 1, Integer::sum);
                if (round % 50 == 0) { // settle and compare at four points of the churn
                    long start = System.nanoTime();
                    Map<Long, String> expected = new HashMap<>();
                    pods.forEach((name, s) -> {
                        if (s.ready()) {
                            expected.put(InstanceIds.hashOf(ns, name), "tcp://" + ips[s.ip()] + ":" + zmqPort);
                        }
                    });
                    for (int r = 0; r < 2; r++) {
                        int ordinal = r;
                        await().atMost(Duration.ofSeconds(120))
                                .ignoreExceptions()
                                .untilAsserted(
                                        () -> assertThat(cluster.registrations(cluster.replica(kvi, ordinal), "llama"))
                                                .as("replica %d after round", ordinal)
                                                .isEqualTo(expected));
                    }
                    settleMillis += (System.nanoTime() - start) / 1_000_000;
                    settles++;
                }
            }
            System.out.println("operator churn: " + rounds + " rounds " + actions + ", " + settles
                    + " settles, mean settle " + settleMillis / settles + " ms");
            assertThat(actions.keySet()).contains("create", "delete", "ip-change", "readiness-flap");
            harness.deleteKvWorkers(ns, Duration.ofSeconds(60));
            harness.client().resources(KvIndexer.class).inNamespace(ns).delete();
            List.copyOf(pods.keySet()).forEach(p -> harness.deletePod(ns, p));
        }
    }
}
