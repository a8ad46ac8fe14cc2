package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration;
import io.kvindexer.operator.support.ApiServerDispatcher;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * An engine pod deleted and created again under the same name and IP (a StatefulSet's pods always are), which the
 * operator first sees once it is back and not yet Ready: a new engine, whose old registration must go at once, not
 * after {@code spec.unregisterAfterSeconds} as for a readiness flap of the same pod. Real indexer replicas on the
 * mock API server; the engine pods are pod objects only.
 *
 * A pod created again that is Ready by the time the operator sees it is registered anew.
 *
 * <p>The operator sees the delete and the create as one change, as its informer does when it re-lists after missing
 * both (a watch that broke, an API server restart): the mock API server here lets a pod update carry another uid,
 * which a real one never does, and sends it as one MODIFIED event.
 */
class RecreatedEnginePodEndToEndTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** Far beyond what the test waits for the old registration to go: the readiness hold cannot be what ends it. */
    private static final int HOLD_SECONDS = 120;

    private static final Duration GONE_WITHIN = Duration.ofSeconds(20);
    private static final String NS = "recreated";

    /** The CRUD mock, except that a pod update naming another uid replaces the pod under its name. */
    static final class RecreatingDispatcher extends ApiServerDispatcher {
        @Override
        public void preserveMetadata(JsonNode current, JsonNode updated) {
            String asked = updated.path("metadata").path("uid").asText("");
            super.preserveMetadata(current, updated);
            if (!asked.isEmpty() && "Pod".equals(updated.path("kind").asText())) {
                ((ObjectNode) updated.get("metadata")).put("uid", asked);
            }
        }
    }

    @Test
    void aPodRecreatedUnderItsNameIsUnregisteredAtOnceAndRegisteredWhenReady() throws Exception {
        KubernetesMockServer api = new KubernetesMockServer(
                new Context(), new MockWebServer(), new HashMap<>(), new RecreatingDispatcher(), false);
        api.init();
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(1));
        String ip = LoopbackCluster.engineIp(0);
        long id = InstanceIds.hashOf(NS, "vllm-0");
        try (KubernetesClient client = api.createClient();
                OperatorHarness harness = new OperatorHarness(client, Duration.ofSeconds(3));
                LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", 2, port);
            String oldUid = harness.startEnginePod(NS, "vllm-0", VLLM, ip, true)
                    .getMetadata()
                    .getUid();
            assertThat(oldUid).isNotBlank();
            KvWorker w = Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 16, zmqPort, null, 1);
            w.getSpec().setUnregisterAfterSeconds(HOLD_SECONDS);
            harness.create(w);
            Map<Long, String> registered = Map.of(id, "tcp://" + ip + ":" + zmqPort);
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                for (int r = 0; r < 2; r++) {
                    assertThat(cluster.registrations(cluster.replica(kvi, r), "llama"))
                            .isEqualTo(registered);
                }
                assertThat(harness.kvWorker(NS, "vllm").getStatus().pods())
                        .singleElement()
                        .returns(oldUid, PodRegistration::uid)
                        .satisfies(p -> assertThat(p.registeredOn()).containsExactly("kv-0", "kv-1"));
            });

            // the pod is deleted and created again: same name, same IP, a new engine starting (not Ready)
            String newUid = UUID.randomUUID().toString();
            Pod recreated = harness.upsertPod(meta(newUid), ip, false);
            assertThat(recreated.getMetadata().getUid()).isEqualTo(newUid);
            await().atMost(GONE_WITHIN).ignoreExceptions().untilAsserted(() -> {
                for (int r = 0; r < 2; r++) {
                    assertThat(cluster.registrations(cluster.replica(kvi, r), "llama"))
                            .as("the old engine's registration on kv-%d", r)
                            .isEmpty();
                }
            });
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .untilAsserted(() -> assertThat(
                                    harness.kvWorker(NS, "vllm").getStatus().pods())
                            .isEmpty());

            // the new engine turns Ready: registered like any new pod, under its own uid
            harness.upsertPod(meta(newUid), ip, true);
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                for (int r = 0; r < 2; r++) {
                    assertThat(cluster.registrations(cluster.replica(kvi, r), "llama"))
                            .isEqualTo(registered);
                }
                assertThat(harness.kvWorker(NS, "vllm").getStatus().pods())
                        .singleElement()
                        .returns(newUid, PodRegistration::uid);
            });

            // recreated again, and Ready by the time the operator sees it: the same endpoint, yet a new engine, so
            // the registration is made anew (unregister, register) on every replica rather than left as it is
            double unregistered = registrations(harness, "unregistered");
            double made = registrations(harness, "registered");
            String thirdUid = UUID.randomUUID().toString();
            harness.upsertPod(meta(thirdUid), ip, true);
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                assertThat(registrations(harness, "unregistered")).isEqualTo(unregistered + 2);
                assertThat(registrations(harness, "registered")).isEqualTo(made + 2);
                for (int r = 0; r < 2; r++) {
                    assertThat(cluster.registrations(cluster.replica(kvi, r), "llama"))
                            .isEqualTo(registered);
                }
                assertThat(harness.kvWorker(NS, "vllm").getStatus().pods())
                        .singleElement()
                        .returns(thirdUid, PodRegistration::uid);
            });
            harness.deleteKvWorkers(NS, WAIT);
        } finally {
            api.destroy();
        }
    }

    /** kvindexer_operator_registrations_total{action}: (instance, rank) registrations made or removed. */
    private static double registrations(OperatorHarness harness, String action) {
        return harness.registry().scrape().stream()
                .filter(s -> s.getMetadata().getName().equals("kvindexer_operator_registrations"))
                .flatMap(s -> ((CounterSnapshot) s).getDataPoints().stream())
                .filter(d -> action.equals(d.getLabels().get("action")))
                .mapToDouble(CounterSnapshot.CounterDataPointSnapshot::getValue)
                .sum();
    }

    private static io.fabric8.kubernetes.api.model.ObjectMeta meta(String uid) {
        return new ObjectMetaBuilder()
                .withName("vllm-0")
                .withNamespace(NS)
                .withLabels(VLLM)
                .withUid(uid)
                .build();
    }
}
