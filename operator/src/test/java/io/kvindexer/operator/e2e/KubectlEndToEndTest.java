package io.kvindexer.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
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
 * re-applies, lists with {@code kubectl get kvi,kvw} and deletes, against the CRUD mock behind a discovery shim;
 * the operator reacts to each step. The {@code get} output is kept in target/kubectl-get-kvi-kvw.txt (README).
 */
@EnableKubernetesMockClient(crud = true, https = false)
class KubectlEndToEndTest {
    static KubernetesClient client;
    private static final Path KUBECTL = Path.of("/usr/bin/kubectl");
    private static final Path CRDS = Path.of("../crds");
    private static final Path EXAMPLE = Path.of("../examples/kvindexer.yaml");
    private static final String NS = "kvi-kubectl";
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path home;
    private DiscoveryShim shim;
    private OperatorHarness harness;
    private Path kubeconfig;

    record Result(int exit, String output) {
    }

    @BeforeEach
    void setUp() throws IOException {
        assertThat(KUBECTL).as("kubectl binary (the test runs the user's real command)").isExecutable();
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
        List<String> cmd = new ArrayList<>(List.of(KUBECTL.toString(), "--kubeconfig", kubeconfig.toString(),
                "--cache-dir", home.resolve("cache").toString(), "--request-timeout", "30s"));
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
        assertThat(crds.output()).contains("customresourcedefinition.apiextensions.k8s.io/kvindexers.kvindexer.io created",
                "customresourcedefinition.apiextensions.k8s.io/kvworkers.kvindexer.io created");

        harness = new OperatorHarness(client, Duration.ofSeconds(3));

        Result apply = kubectl("apply", "--validate=false", "-f", EXAMPLE.toString());
        assertThat(apply.exit()).as(apply.output()).isZero();
        assertThat(apply.output()).contains("kvindexer.kvindexer.io/kv-indexer created",
                "kvworker.kvindexer.io/vllm-llama created");

        // the operator reacts: the replicas' StatefulSet, and both statuses written
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            StatefulSet sts = client.apps().statefulSets().inNamespace(NS).withName("kv-indexer").get();
            assertThat(sts.getSpec().getReplicas()).isEqualTo(2);
            assertThat(sts.getSpec().getTemplate().getSpec().getContainers().getFirst().getImage())
                    .isEqualTo("ghcr.io/kv-indexer/kv-indexer:0.1.0");
            assertThat(harness.kvIndexer(NS, "kv-indexer").getStatus().ready()).isEqualTo("0/2");
            assertThat(harness.kvWorker(NS, "vllm-llama").getStatus().registeredPods()).isZero();
        });

        // an edit and a re-apply (client-side apply: a merge patch): three replicas, and ports free on this machine
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIp(0), LoopbackCluster.replicaIp(1),
                LoopbackCluster.replicaIp(2));
        int zmq = LoopbackCluster.freePort(LoopbackCluster.engineIp(0));
        int replay = LoopbackCluster.freePort(LoopbackCluster.engineIp(0));
        Path edited = home.resolve("kvindexer.yaml");
        Files.writeString(edited, Files.readString(EXAMPLE).replace("replicas: 2", "replicas: 3")
                .replace("port: 8090", "port: " + port).replace("zmqPort: 5557", "zmqPort: " + zmq)
                .replace("replayPort: 5600", "replayPort: " + replay));
        Result reapply = kubectl("apply", "--validate=false", "-f", edited.toString());
        assertThat(reapply.exit()).as(reapply.output()).isZero();
        assertThat(reapply.output()).contains("kvindexer.kvindexer.io/kv-indexer configured",
                "kvworker.kvindexer.io/vllm-llama configured");
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            StatefulSet sts = client.apps().statefulSets().inNamespace(NS).withName("kv-indexer").get();
            assertThat(sts.getSpec().getReplicas()).isEqualTo(3);
            assertThat(sts.getSpec().getTemplate().getSpec().getContainers().getFirst().getArgs())
                    .containsSubsequence("--port", String.valueOf(port));
            assertThat(harness.kvIndexer(NS, "kv-indexer").getStatus().ready()).isEqualTo("0/3");
        });

        // play the cluster: three real indexer replicas and one vLLM engine pod (a real simulator)
        try (LoopbackCluster cluster = new LoopbackCluster(client, harness)) {
            for (int i = 0; i < 3; i++) {
                cluster.startReplica(NS, "kv-indexer", i);
            }
            cluster.startEngine(NS, "vllm-llama-7d9c-x2x4q", java.util.Map.of("app", "vllm-llama"), 0, zmq, replay);
            KvIndexer kvi = harness.kvIndexer(NS, "kv-indexer");
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                assertThat(harness.kvIndexer(NS, "kv-indexer").getStatus().ready()).isEqualTo("3/3");
                assertThat(harness.kvWorker(NS, "vllm-llama").getStatus().registeredPods()).isEqualTo(1);
                for (int i = 0; i < 3; i++) {
                    assertThat(cluster.http.workers(cluster.replica(kvi, i), "meta-llama/Llama-3.1-8B-Instruct",
                            "default")).singleElement().satisfies(w -> assertThat(w.endpoints())
                            .containsEntry(0, "tcp://" + LoopbackCluster.engineIp(0) + ":" + zmq));
                }
            });

            Result get = kubectl("get", "kvi,kvw");
            assertThat(get.exit()).as(get.output()).isZero();
            assertThat(get.output()).contains("kvindexer.kvindexer.io/kv-indexer", "kvworker.kvindexer.io/vllm-llama",
                    "READY", "3/3", "INDEXER", "PODS", "REGISTERED", "kv-indexer");
            Files.writeString(Path.of("target/kubectl-get-kvi-kvw.txt"), "$ kubectl get kvi,kvw\n" + get.output());

            // the KvWorker's finalizer unregisters the engine from every replica before it lets go
            Result deleteWorker = kubectl("delete", "--wait=false", "kvw", "vllm-llama");
            assertThat(deleteWorker.exit()).as(deleteWorker.output()).isZero();
            assertThat(deleteWorker.output()).contains("kvworker.kvindexer.io \"vllm-llama\" deleted");
            await().atMost(WAIT).until(() -> harness.kvWorker(NS, "vllm-llama") == null);
            for (int i = 0; i < 3; i++) {
                assertThat(cluster.http.workers(cluster.replica(kvi, i))).as("replica %d", i).isEmpty();
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
