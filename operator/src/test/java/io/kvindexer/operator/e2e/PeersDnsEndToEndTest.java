package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.e2e.LoopbackCluster.engineIp;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerMain;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The pod template's own {@code --peers-dns <name>-peers.<ns>.svc:<port>}, given unchanged to a real indexer
 * process whose resolver reads a hosts file ({@code -Djdk.net.hosts.file}) standing in for the headless Service:
 * the name resolves to several addresses (a dead one first, then the Ready replicas, never the starting one), and
 * the new replica recovers from the first peer that answers before it turns Ready. Needs the indexer's
 * {@code --peers-dns} flag (the "indexer-ops" branch).
 */
class PeersDnsEndToEndTest {
    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(Duration.ofSeconds(3));

    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String NS = "peersdns";

    @Test
    void aNewReplicaFindsItsPeersThroughTheHeadlessServiceNameAndRecoversFromTheFirstThatAnswers() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(3));
        int zmqPort = LoopbackCluster.freePort(engineIp(0));
        Process replica2 = null;
        try (LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", 2, port);
            EngineSimulator engine = cluster.startEngine(NS, "vllm-a", Map.of("app", "vllm"), 0, zmqPort, null);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", Map.of("app", "vllm"), "llama", 4, zmqPort, null, 1));
            await().atMost(WAIT).until(() -> engine.subscriptions() >= 2);
            int[] prompt = IntStream.rangeClosed(1, 12).toArray();
            engine.storeSequence(prompt, 4).get();
            long id = InstanceIds.hashOf(NS, "vllm-a");
            await().atMost(WAIT)
                    .ignoreExceptions()
                    .until(() -> cluster.matched(cluster.replica(kvi, 1), "llama", prompt, id) == 12);

            harness.mergePatch(KvIndexer.class, NS, "kv", "{\"spec\":{\"replicas\":3}}");
            await().atMost(WAIT)
                    .until(() -> harness.statefulSet(NS, "kv").getSpec().getReplicas() == 3);
            List<String> template = cluster.mountedArgs(NS, "kv", 2);
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
            harness.replicaPod(kvi, 2, LoopbackCluster.replicaIp(2), false);
            replica2 = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(Path.of("target", "peers-dns-replica.log").toFile())
                    .start();
            IndexerEndpoint r2 = cluster.replica(kvi, 2);
            await().atMost(WAIT).ignoreExceptions().until(() -> cluster.http.ready(r2));
            assertThat(cluster.matched(r2, "llama", prompt, id))
                    .as("recovered through --peers-dns before Ready")
                    .isEqualTo(12);
            harness.startReplicaPod(kvi, 2, LoopbackCluster.replicaIp(2));
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                assertThat(cluster.http.peers(r2))
                        .contains(
                                "https://kv-0.kv-peers." + NS + ".svc:" + port,
                                "https://kv-1.kv-peers." + NS + ".svc:" + port);
                assertThat(harness.kvIndexer(NS, "kv").getStatus().ready()).isEqualTo("3/3");
            });
            harness.deleteKvWorkers(NS, WAIT);
        } finally {
            if (replica2 != null) {
                replica2.destroy();
                replica2.waitFor();
            }
        }
    }
}
