package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.e2e.LoopbackCluster.engineIp;
import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.support.ApiServerDispatcher;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The API server goes away and comes back on the same address with the same objects (as after a control-plane
 * restart): the real operator's informers re-list and re-watch, so an engine pod change made after the restart
 * reaches every real indexer replica. The periodic resync is set far beyond the test's ceiling, so only the
 * informers' events can carry the change.
 */
class ApiServerRestartTest {
    private static final Duration WAIT = Duration.ofSeconds(120);
    private static final Duration NO_RESYNC = Duration.ofHours(1);
    private static final String NS = "restart";

    @Test
    void theOperatorResumesAfterTheApiServerRestarts() throws Exception {
        InetAddress loopback = InetAddress.getByName("127.0.0.1");
        // the dispatcher holds the CRUD state; the restarted server is handed the same one, as etcd outlives a
        // kube-apiserver restart
        KubernetesCrudDispatcher state = new ApiServerDispatcher();
        KubernetesMockServer api = server(state);
        api.init(loopback, 0);
        int apiPort = api.getPort();
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        int zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(3));
        try (KubernetesClient client = api.createClient();
                OperatorHarness harness = new OperatorHarness(client, NO_RESYNC);
                LoopbackCluster cluster = new LoopbackCluster(harness)) {
            KvIndexer kvi = cluster.startIndexer(NS, "kv", 2, port);
            cluster.startEngine(NS, "vllm-a", VLLM, 0, zmqPort, null);
            cluster.startEngine(NS, "vllm-b", VLLM, 1, zmqPort, null);
            harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 4, zmqPort, null, 1));
            awaitRegistered(cluster, kvi, Map.of("vllm-a", 0, "vllm-b", 1), zmqPort, () -> {});

            // the API server stops: nothing listens on its port any more
            api.destroy();
            await().atMost(WAIT)
                    .untilAsserted(
                            () -> assertThatThrownBy(() -> connect(apiPort)).isInstanceOf(ConnectException.class));
            // and comes back on the same port with the same objects (the bind retries while the port is released)
            KubernetesMockServer[] restarted = new KubernetesMockServer[1];
            await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
                KubernetesMockServer s = server(state);
                s.init(loopback, apiPort);
                restarted[0] = s;
            });
            api = restarted[0];
            assertThat(api.getPort()).isEqualTo(apiPort);
            assertThat(harness.kvWorker(NS, "vllm"))
                    .as("the CRUD state survived the restart")
                    .isNotNull();

            // a new engine pod after the restart. The mock keeps no event history, so a change made while the
            // informers were still reconnecting would be lost for good (a real API server replays it from the
            // watch's resourceVersion or answers 410 and the informer re-lists): the pod is re-written with a new
            // label value on every poll until the operator has registered it, which proves the pod watch is back
            cluster.startEngine(NS, "vllm-c", VLLM, 2, zmqPort, null);
            int[] nudges = {0};
            awaitRegistered(
                    cluster,
                    kvi,
                    Map.of("vllm-a", 0, "vllm-b", 1, "vllm-c", 2),
                    zmqPort,
                    () -> harness.startEnginePod(
                            NS, "vllm-c", Map.of("app", "vllm", "nudge", "n" + ++nudges[0]), engineIp(2), true));
            // now a change made once, after the informers resumed, must reach every replica
            harness.deletePod(NS, "vllm-a");
            cluster.stopEngine(NS, "vllm-a");
            awaitRegistered(cluster, kvi, Map.of("vllm-b", 1, "vllm-c", 2), zmqPort, () -> {});
            System.out.println("api server restart: operator resumed after " + nudges[0] + " re-writes of the new pod");

            harness.deleteKvWorkers(NS, WAIT);
        } finally {
            api.destroy();
        }
    }

    private static KubernetesMockServer server(KubernetesCrudDispatcher state) {
        return new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), state, false);
    }

    private static void connect(int port) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 2_000);
        }
    }

    /** Every replica's registrations equal the given engine pods (pod name → engine IP slot); nudge runs per poll. */
    private static void awaitRegistered(
            LoopbackCluster cluster, KvIndexer kvi, Map<String, Integer> pods, int zmqPort, Runnable nudge) {
        Map<Long, String> expected = LoopbackCluster.engineEndpoints(NS, pods, zmqPort);
        for (int r = 0; r < 2; r++) {
            int ordinal = r;
            await().atMost(WAIT)
                    .pollInterval(Duration.ofMillis(500))
                    .ignoreExceptions()
                    .untilAsserted(() -> {
                        nudge.run();
                        assertThat(cluster.registrations(cluster.replica(kvi, ordinal), "llama"))
                                .as("registrations on replica %d", ordinal)
                                .isEqualTo(expected);
                    });
        }
    }
}
