package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.OperatorHarness;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The user's own commands, for real: the kubectl binary applies crds/ and examples/kvindexer.yaml, edits and
 * re-applies, scales with {@code kubectl scale} (the shim serves the scale subresource the mock lacks), applies an
 * autoscaling spec and takes it out again, lists with {@code kubectl get kvi,kvw} and deletes, against the CRUD mock
 * behind a discovery shim; the operator reacts to each step. The {@code get} output is kept in
 * target/kubectl-get-kvi-kvw.txt (quoted in docs/kubernetes.md).
 */
@EnableKubernetesMockClient(crud = true, https = false)
class KubectlEndToEndTest {
    static KubernetesClient client;
    private static final Path KUBECTL = Path.of("/usr/bin/kubectl");
    private static final Path CRDS = Path.of("../crds");
    private static final Path EXAMPLE = Path.of("../examples/kvindexer.yaml");
    private static final String NS = "kvi-kubectl";

    @TempDir
    Path home;

    private DiscoveryShim shim;
    private OperatorHarness harness;
    private Path kubeconfig;

    record Result(int exit, String output) {}

    @BeforeEach
    void setUp() throws IOException {
        assertThat(KUBECTL)
                .as("kubectl binary (the test runs the user's real command)")
                .isExecutable();
        shim = new DiscoveryShim(client.getMasterUrl().toString(), CRDS);
        kubeconfig = home.resolve("kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: mock
                  cluster:
                    server: %s
                users:
                - name: test
                  user:
                    token: test-token
                contexts:
                - name: mock
                  context:
                    cluster: mock
                    user: test
                    namespace: %s
                current-context: mock
                """.formatted(shim.url(), NS));
    }

    @AfterEach
    void tearDown() {
        if (harness != null) {
            harness.close();
        }
        shim.close();
    }

    private Result kubectl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(
                KUBECTL.toString(),
                "--kubeconfig",
                kubeconfig.toString(),
                "--cache-dir",
                home.resolve("cache").toString(),
                "--request-timeout",
                "30s"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("HOME", home.toString());
        pb.environment().remove("KUBECONFIG");
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(90, TimeUnit.SECONDS)).as("kubectl finished").isTrue();
        return new Result(p.exitValue(), out);
    }

    @Test
    void applyEditGetAndDeleteWithTheRealKubectl() throws Exception {
        Result crds = kubectl("apply", "--validate=false", "-f", CRDS.toString());
        assertThat(crds.exit()).as(crds.output()).isZero();
        assertThat(crds.output())
                .contains(
                        "customresourcedefinition.apiextensions.k8s.io/kvindexers.kvindexer.io created",
                        "customresourcedefinition.apiextensions.k8s.io/kvworkers.kvindexer.io created");

        harness = new OperatorHarness(client, Duration.ofSeconds(3));

        Result apply = kubectl("apply", "--validate=false", "-f", EXAMPLE.toString());
        assertThat(apply.exit()).as(apply.output()).isZero();
        assertThat(apply.output())
                .contains("kvindexer.kvindexer.io/kv-indexer created", "kvworker.kvindexer.io/vllm-llama created");

        // the operator reacts: the replicas' StatefulSet, and both statuses written
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            StatefulSet sts = harness.statefulSet(NS, "kv-indexer");
            assertThat(sts.getSpec().getReplicas()).isEqualTo(2);
            assertThat(harness.indexerContainer(NS, "kv-indexer").getImage())
                    .isEqualTo("ghcr.io/kv-indexer/kv-indexer:0.1.0");
            assertThat(harness.kvIndexer(NS, "kv-indexer").getStatus().ready()).isEqualTo("0/2");
            assertThat(harness.kvWorker(NS, "vllm-llama").getStatus().registeredPods())
                    .isZero();
        });

        // an edit and a re-apply (client-side apply: a merge patch): three replicas, and ports free on this machine
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(3));
        int zmq = LoopbackCluster.freePort(LoopbackCluster.engineIp(0));
        int replay = LoopbackCluster.freePort(LoopbackCluster.engineIp(0));
        Path edited = home.resolve("kvindexer.yaml");
        Files.writeString(
                edited,
                Files.readString(EXAMPLE)
                        .replace("replicas: 2", "replicas: 3")
                        .replace("port: 8090", "port: " + port)
                        .replace("zmqPort: 5557", "zmqPort: " + zmq)
                        .replace("replayPort: 5600", "replayPort: " + replay));
        Result reapply = kubectl("apply", "--validate=false", "-f", edited.toString());
        assertThat(reapply.exit()).as(reapply.output()).isZero();
        assertThat(reapply.output())
                .contains(
                        "kvindexer.kvindexer.io/kv-indexer configured", "kvworker.kvindexer.io/vllm-llama configured");
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            StatefulSet sts = harness.statefulSet(NS, "kv-indexer");
            assertThat(sts.getSpec().getReplicas()).isEqualTo(3);
            assertThat(harness.indexerContainer(NS, "kv-indexer").getArgs())
                    .containsSubsequence("--port", String.valueOf(port));
            assertThat(harness.kvIndexer(NS, "kv-indexer").getStatus().ready()).isEqualTo("0/3");
        });

        // play the cluster: three real indexer replicas and one vLLM engine pod (a real simulator)
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            for (int i = 0; i < 3; i++) {
                cluster.startReplica(NS, "kv-indexer", i);
            }
            cluster.startEngine(NS, "vllm-llama-7d9c-x2x4q", java.util.Map.of("app", "vllm-llama"), 0, zmq, replay);
            KvIndexer kvi = harness.kvIndexer(NS, "kv-indexer");
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                assertThat(harness.kvIndexer(NS, "kv-indexer").getStatus().ready())
                        .isEqualTo("3/3");
                assertThat(harness.kvWorker(NS, "vllm-llama").getStatus().registeredPods())
                        .isEqualTo(1);
                for (int i = 0; i < 3; i++) {
                    assertThat(cluster.http.workers(
                                    cluster.replica(kvi, i), "meta-llama/Llama-3.1-8B-Instruct", "default"))
                            .singleElement()
                            .satisfies(w -> assertThat(w.endpoints())
                                    .containsEntry(0, "tcp://" + LoopbackCluster.engineIp(0) + ":" + zmq));
                }
            });

            Result get = kubectl("get", "kvi,kvw");
            assertThat(get.exit()).as(get.output()).isZero();
            assertThat(get.output())
                    .contains(
                            "kvindexer.kvindexer.io/kv-indexer",
                            "kvworker.kvindexer.io/vllm-llama",
                            "READY",
                            "3/3",
                            "INDEXER",
                            "PODS",
                            "REGISTERED",
                            "kv-indexer");
            // STATUS: each one's Ready reason, as a pod's (why it is not Ready, at a glance)
            assertThat(get.output().lines())
                    .anySatisfy(l -> assertThat(l).contains("STATUS", "READY"))
                    .anySatisfy(l -> assertThat(l).contains("kvindexer.kvindexer.io/kv-indexer", "AllReplicasReady"))
                    .anySatisfy(l -> assertThat(l).contains("kvworker.kvindexer.io/vllm-llama", "AllRegistered"));

            // kubectl scale goes through the scale subresource; the pod template does not move, so no replica restarts
            PodTemplateSpec template =
                    harness.statefulSet(NS, "kv-indexer").getSpec().getTemplate();
            Result scale = kubectl("scale", "kvindexer/kv-indexer", "--replicas=2");
            assertThat(scale.exit()).as(scale.output()).isZero();
            assertThat(scale.output()).contains("kvindexer.kvindexer.io/kv-indexer scaled");
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                StatefulSet sts = harness.statefulSet(NS, "kv-indexer");
                assertThat(sts.getSpec().getReplicas()).isEqualTo(2);
                assertThat(sts.getSpec().getTemplate()).isEqualTo(template);
            });
            cluster.removeReplica(NS, "kv-indexer", 2); // the StatefulSet controller removes the highest ordinal
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                assertThat(harness.kvIndexer(NS, "kv-indexer").getStatus().ready())
                        .isEqualTo("2/2");
                assertThat(cluster.http.peers(cluster.replica(kvi, 0)))
                        .containsExactly("https://kv-indexer-1.kv-indexer-peers." + NS + ".svc:" + port);
                assertThat(cluster.http.peers(cluster.replica(kvi, 1)))
                        .containsExactly("https://kv-indexer-0.kv-indexer-peers." + NS + ".svc:" + port);
            });
            Result raw = kubectl(
                    "get", "--raw", "/apis/kvindexer.io/v1alpha1/namespaces/" + NS + "/kvindexers/kv-indexer/scale");
            assertThat(raw.exit()).as(raw.output()).isZero();
            JsonNode scaleDoc = new ObjectMapper().readTree(raw.output());
            assertThat(scaleDoc.path("kind").asText()).isEqualTo("Scale");
            assertThat(scaleDoc.path("spec").path("replicas").asInt()).isEqualTo(2);
            assertThat(scaleDoc.path("status").path("replicas").asInt()).isEqualTo(2);
            assertThat(scaleDoc.path("status").path("selector").asText())
                    .isEqualTo("app.kubernetes.io/name=kv-indexer,app.kubernetes.io/instance=kv-indexer");

            get = kubectl("get", "kvi,kvw");
            assertThat(get.exit()).as(get.output()).isZero();
            assertThat(get.output()).contains("kvindexer.kvindexer.io/kv-indexer", "READY", "2/2");
            Files.writeString(Path.of("target/kubectl-get-kvi-kvw.txt"), "$ kubectl get kvi,kvw\n" + get.output());

            // spec.autoscaling: the operator owns an autoscaling/v2 HPA on the scale subresource; removed with the
            // field
            Path two = home.resolve("kvindexer-2.yaml");
            Files.writeString(two, Files.readString(edited).replace("replicas: 3", "replicas: 2"));
            Path autoscaled = home.resolve("kvindexer-autoscaled.yaml");
            Files.writeString(autoscaled, Files.readString(two).replace("  replicas: 2\n", """
                      replicas: 2
                      autoscaling:
                        minReplicas: 2
                        maxReplicas: 4
                        targetCPUUtilizationPercentage: 70
                    """));
            Result auto = kubectl("apply", "--validate=false", "-f", autoscaled.toString());
            assertThat(auto.exit()).as(auto.output()).isZero();
            assertThat(auto.output()).contains("kvindexer.kvindexer.io/kv-indexer configured");
            var hpas = client.autoscaling().v2().horizontalPodAutoscalers().inNamespace(NS);
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                HorizontalPodAutoscaler hpa = hpas.withName("kv-indexer").get();
                assertThat(hpa.getSpec().getScaleTargetRef().getApiVersion()).isEqualTo("kvindexer.io/v1alpha1");
                assertThat(hpa.getSpec().getScaleTargetRef().getKind()).isEqualTo("KvIndexer");
                assertThat(hpa.getSpec().getScaleTargetRef().getName()).isEqualTo("kv-indexer");
                assertThat(hpa.getSpec().getMinReplicas()).isEqualTo(2);
                assertThat(hpa.getSpec().getMaxReplicas()).isEqualTo(4);
                assertThat(hpa.getSpec().getMetrics()).singleElement().satisfies(m -> {
                    assertThat(m.getResource().getName()).isEqualTo("cpu");
                    assertThat(m.getResource().getTarget().getAverageUtilization())
                            .isEqualTo(70);
                });
                assertThat(hpa.getMetadata().getOwnerReferences())
                        .singleElement()
                        .satisfies(o -> assertThat(o.getKind()).isEqualTo("KvIndexer"));
            });
            Result manual = kubectl("apply", "--validate=false", "-f", two.toString());
            assertThat(manual.exit()).as(manual.output()).isZero();
            await().atMost(WAIT).until(() -> hpas.withName("kv-indexer").get() == null);

            // the KvWorker's finalizer unregisters the engine from every replica before it lets go
            Result deleteWorker = kubectl("delete", "--wait=false", "kvw", "vllm-llama");
            assertThat(deleteWorker.exit()).as(deleteWorker.output()).isZero();
            assertThat(deleteWorker.output()).contains("kvworker.kvindexer.io \"vllm-llama\" deleted");
            await().atMost(WAIT).until(() -> harness.kvWorker(NS, "vllm-llama") == null);
            for (int i = 0; i < 2; i++) {
                assertThat(cluster.http.workers(cluster.replica(kvi, i)))
                        .as("replica %d", i)
                        .isEmpty();
            }
            // and the rest of the file (on a cluster, garbage collection then removes the replicas)
            Result delete = kubectl("delete", "--wait=false", "--ignore-not-found", "-f", edited.toString());
            assertThat(delete.exit()).as(delete.output()).isZero();
            assertThat(delete.output()).contains("kvindexer.kvindexer.io \"kv-indexer\" deleted");
            await().atMost(WAIT).until(() -> harness.kvIndexer(NS, "kv-indexer") == null);
        }
        Result empty = kubectl("get", "kvi,kvw");
        assertThat(empty.output()).contains("No resources found");
    }
}
