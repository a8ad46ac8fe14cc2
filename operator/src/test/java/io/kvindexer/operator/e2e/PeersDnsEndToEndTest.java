package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.e2e.LoopbackCluster.engineIp;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kvindexer.indexer.IndexerMain;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The pod template's own {@code --peers-dns <name>-peers.<ns>.svc:<port>}, given unchanged to a real indexer
 * process whose resolver reads a hosts file ({@code -Djdk.net.hosts.file}) standing in for the headless Service:
 * the name resolves to several addresses (a dead one first, then the Ready replicas, never the starting one), and
 * the new replica recovers from the first peer that answers before it turns Ready. Needs the indexer's
 * {@code --peers-dns} flag (the "indexer-ops" branch).
 */
@EnableKubernetesMockClient(crud = true)
class PeersDnsEndToEndTest {
    static KubernetesClient client;
    private static OperatorHarness harness;
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String NS = "peersdns";

    @BeforeAll
    static void start() {
        harness = new OperatorHarness(client, Duration.ofSeconds(3));
    }

    @AfterAll
    static void stop() {
        harness.close();
    }

    @Test
    void aNewReplicaFindsItsPeersThroughTheHeadlessServiceNameAndRecoversFromTheFirstThatAnswers() throws Exception {
        int port = LoopbackCluster.freePort(
                LoopbackCluster.replicaIp(0), LoopbackCluster.replicaIp(1), LoopbackCluster.replicaIp(2));
        int zmqPort = LoopbackCluster.freePort(engineIp(0));
        Process replica2 = null;
        try (LoopbackCluster cluster = new LoopbackCluster(client, harness)) {
            client.resources(KvIndexer.class)
                    .inNamespace(NS)
                    .resource(Resources.kvIndexer(NS, "kv", 2, port))
                    .create();
            cluster.startReplica(NS, "kv", 0);
            cluster.startReplica(NS, "kv", 1);
            KvIndexer kvi = cluster.kvIndexer(NS, "kv");
            EngineSimulator engine = cluster.startEngine(NS, "vllm-a", Map.of("app", "vllm"), 0, zmqPort, null);
            client.resources(KvWorker.class)
                    .inNamespace(NS)
                    .resource(Resources.kvWorker(NS, "vllm", "kv", Map.of("app", "vllm"), "llama", 4, zmqPort, null, 1))
                    .create();
            await().atMost(WAIT).until(() -> engine.subscriptions() >= 2);
            int[] prompt = IntStream.rangeClosed(1, 12).toArray();
            engine.storeSequence(prompt, 4).get();
            long id = InstanceIds.hashOf(NS, "vllm-a");
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> matched(cluster, cluster.replica(kvi, 1), prompt, id) == 12);

            harness.mergePatch(KvIndexer.class, NS, "kv", "{\"spec\":{\"replicas\":3}}");
            await().atMost(WAIT)
                    .until(() -> client.apps()
                                    .statefulSets()
                                    .inNamespace(NS)
                                    .withName("kv")
                                    .get()
                                    .getSpec()
                                    .getReplicas()
                            == 3);
            List<String> template =
                    LoopbackCluster.indexerContainer(client, NS, "kv").getArgs();
            String name = template.get(template.indexOf("--peers-dns") + 1);
            assertThat(name).isEqualTo("kv-peers." + NS + ".svc:" + port);

            // the headless Service's records: a replica that is gone (nothing listens there), then the Ready ones
            Path hosts = Path.of("target", "peers-dns-hosts");
            String host = name.substring(0, name.lastIndexOf(':'));
            Files.writeString(
                    hosts,
                    "127.0.0.9 " + host + "\n" + LoopbackCluster.replicaIp(0) + " " + host + "\n"
                            + LoopbackCluster.replicaIp(1) + " " + host + "\n");
            List<String> cmd = new ArrayList<>(List.of(
                    Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Djdk.net.hosts.file=" + hosts.toAbsolutePath(),
                    "-cp",
                    System.getProperty("java.class.path"),
                    IndexerMain.class.getName(),
                    "--host",
                    LoopbackCluster.replicaIp(2)));
            cmd.addAll(template);
            harness.upsertPod(
                    new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
                            .withName("kv-2")
                            .withNamespace(NS)
                            .withLabels(io.kvindexer.operator.indexer.IndexerNames.labels(kvi))
                            .build(),
                    LoopbackCluster.replicaIp(2),
                    false);
            replica2 = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(Path.of("target", "peers-dns-replica.log").toFile())
                    .start();
            IndexerEndpoint r2 = cluster.replica(kvi, 2);
            await().atMost(WAIT).ignoreExceptions().until(() -> cluster.http.ready(r2));
            assertThat(matched(cluster, r2, prompt, id))
                    .as("recovered through --peers-dns before Ready")
                    .isEqualTo(12);
            harness.startReplicaPod(kvi, 2, LoopbackCluster.replicaIp(2));
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                assertThat(cluster.http.peers(r2))
                        .contains(
                                "http://kv-0.kv-peers." + NS + ".svc:" + port,
                                "http://kv-1.kv-peers." + NS + ".svc:" + port);
                assertThat(harness.kvIndexer(NS, "kv").getStatus().ready()).isEqualTo("3/3");
            });
            client.resources(KvWorker.class).inNamespace(NS).delete();
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> client.resources(KvWorker.class)
                            .inNamespace(NS)
                            .list()
                            .getItems()
                            .isEmpty());
        } finally {
            if (replica2 != null) {
                replica2.destroy();
                replica2.waitFor();
            }
        }
    }

    private static int matched(LoopbackCluster cluster, IndexerEndpoint replica, int[] tokens, long instance) {
        return cluster.http
                .query(replica, "llama", "default", IntStream.of(tokens).boxed().toList())
                .path("scores")
                .path(Long.toUnsignedString(instance))
                .path("0")
                .asInt(0);
    }
}
