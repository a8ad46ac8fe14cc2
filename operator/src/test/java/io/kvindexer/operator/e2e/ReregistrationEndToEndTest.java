package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration;
import io.kvindexer.operator.crd.v1alpha1.Security;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An engine pod deleted and created again under its name and IP (a StatefulSet's), Ready when the operator sees it:
 * its registration must be made anew (unregister, register) on every replica, since the one standing is the old
 * engine's. When a replica cannot do it at once (it answers errors, or cannot be reached) the operator keeps at it
 * with back-off until it is done, and the status says where it is still pending; and a status written by an
 * operator that recorded no uids (an upgrade) cannot tell a recreated pod, so each such registration is made anew
 * once. The replicas are {@link CountingIndexer}s (each registration numbered), on the CRUD mock API server that
 * lets a pod update carry another uid ({@link RecreatedEnginePodEndToEndTest.RecreatingDispatcher}).
 */
class ReregistrationEndToEndTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String NS = "rereg";
    private static final int ZMQ_PORT = 5557;
    private static final String IP = "10.7.0.1";
    private static final long ID = InstanceIds.hashOf(NS, "vllm-0");

    private KubernetesMockServer api;
    private KubernetesClient client;
    private OperatorHarness harness;
    private final List<CountingIndexer> replicas = new ArrayList<>();
    private KvIndexer kvi;

    @BeforeEach
    void setUp() throws Exception {
        api = new KubernetesMockServer(
                new Context(),
                new MockWebServer(),
                new HashMap<>(),
                new RecreatedEnginePodEndToEndTest.RecreatingDispatcher(),
                false);
        api.init();
        client = api.createClient();
        harness = new OperatorHarness(client, Duration.ofSeconds(3));
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(2));
        for (int i = 0; i < 2; i++) {
            replicas.add(new CountingIndexer(LoopbackCluster.replicaIp(i), port));
        }
        KvIndexer spec = Resources.kvIndexer(NS, "kv", 2, port);
        spec.getSpec().setSecurity(new Security(new Security.Tls(false, null), new Security.Auth(false)));
        kvi = harness.create(spec);
        for (int i = 0; i < 2; i++) {
            harness.startReplicaPod(kvi, i, LoopbackCluster.replicaIp(i));
        }
    }

    @AfterEach
    void tearDown() {
        try {
            harness.deleteKvWorkers(NS, WAIT);
            harness.close();
        } finally {
            replicas.forEach(CountingIndexer::close);
            client.close();
            api.destroy();
        }
    }

    /** Creates the engine pod (Ready) and the KvWorker; returns once both replicas hold the pod. */
    private String registered() {
        String uid = harness.upsertPod(meta(null), IP, true).getMetadata().getUid();
        harness.create(Resources.kvWorker(NS, "vllm", "kv", VLLM, "llama", 16, ZMQ_PORT, null, 1));
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(replicas)
                    .allSatisfy(r -> assertThat(r.registration(ID, 0)).isNotNull());
            assertThat(pod().registeredOn()).containsExactly("kv-0", "kv-1");
        });
        return uid;
    }

    private PodRegistration pod() {
        return status().pods().getFirst();
    }

    private KvWorkerStatus status() {
        return harness.kvWorker(NS, "vllm").getStatus();
    }

    private long seq(int replica) {
        CountingIndexer.Registered r = replicas.get(replica).registration(ID, 0);
        return r == null ? -1 : r.seq();
    }

    @Test
    void aReplicaThatRefusesTheNewRegistrationIsRetriedUntilItIsMadeAnew() {
        registered();
        long before0 = seq(0);
        long before1 = seq(1);
        CountingIndexer troubled = replicas.get(1);
        troubled.refuse("POST /unregister", 500);
        troubled.refuse("POST /register", 500);

        String newUid = UUID.randomUUID().toString();
        harness.upsertPod(meta(newUid), IP, true);

        // kv-0 holds the new engine's registration; kv-1 still the old one, and the status says so
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(seq(0)).isNotEqualTo(before0);
            PodRegistration p = pod();
            assertThat(p.uid()).isEqualTo(newUid);
            assertThat(p.registeredOn()).containsExactly("kv-0");
            assertThat(p.reregisterOn()).containsExactly("kv-1");
            assertThat(Resources.condition(status().conditions(), "Degraded"))
                    .satisfies(c -> assertThat(c.getStatus()).isEqualTo("True"))
                    .satisfies(c -> assertThat(c.getMessage()).contains("kv-1").contains("500"));
        });
        assertThat(seq(1)).isEqualTo(before1);
        int tries = troubled.calls("POST /unregister");

        // retried with back-off, not only at the resync: several tries within seconds
        await().atMost(WAIT).until(() -> troubled.calls("POST /unregister") >= tries + 2);
        troubled.accept();
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(seq(1)).as("kv-1 made the registration anew").isNotEqualTo(before1);
            PodRegistration p = pod();
            assertThat(p.registeredOn()).containsExactly("kv-0", "kv-1");
            assertThat(p.reregisterOn()).isNull();
            assertThat(Resources.condition(status().conditions(), "Ready").getStatus())
                    .isEqualTo("True");
        });
    }

    @Test
    void anUnreachableReplicaMakesTheRegistrationAnewOnceItIsBack() {
        registered();
        long before1 = seq(1);
        CountingIndexer troubled = replicas.get(1);
        for (String call : List.of("GET /workers", "POST /unregister", "POST /register")) {
            troubled.refuse(call, 503);
        }

        String newUid = UUID.randomUUID().toString();
        harness.upsertPod(meta(newUid), IP, true);
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            PodRegistration p = pod();
            assertThat(p.uid()).isEqualTo(newUid);
            assertThat(p.registeredOn()).containsExactly("kv-0");
            assertThat(p.reregisterOn()).containsExactly("kv-1");
        });
        int reads = troubled.calls("GET /workers");
        await().atMost(WAIT).until(() -> troubled.calls("GET /workers") >= reads + 2);

        troubled.accept();
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(seq(1)).as("kv-1 made the registration anew").isNotEqualTo(before1);
            assertThat(pod().registeredOn()).containsExactly("kv-0", "kv-1");
            assertThat(pod().reregisterOn()).isNull();
        });
    }

    @Test
    void afterAnUpgradeAStatusWithoutUidsIsRegisteredAnewOnceAndNotAgain() throws Exception {
        registered();
        // the operator stops for an upgrade; meanwhile the pod is recreated under its name and IP, Ready again
        harness.close();
        KvWorker w = harness.kvWorker(NS, "vllm");
        PodRegistration old = w.getStatus().pods().getFirst();
        // what an operator that recorded no uid left
        w.setStatus(new KvWorkerStatus(
                w.getStatus().observedGeneration(),
                1,
                1,
                List.of(new PodRegistration(
                        old.pod(), old.instanceId(), old.endpoint(), old.replayEndpoint(), old.registeredOn())),
                w.getStatus().conditions()));
        client.resource(w).updateStatus();
        String newUid = UUID.randomUUID().toString();
        harness.upsertPod(meta(newUid), IP, true);
        long before0 = seq(0);
        long before1 = seq(1);
        replicas.forEach(CountingIndexer::resetCalls);

        Duration resync = Duration.ofSeconds(1); // the upgraded operator's: short, so that resyncs come soon
        harness = new OperatorHarness(client, resync);
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(seq(0)).isNotEqualTo(before0);
            assertThat(seq(1)).isNotEqualTo(before1);
            assertThat(pod().uid()).isEqualTo(newUid);
            assertThat(pod().registeredOn()).containsExactly("kv-0", "kv-1");
        });
        long after0 = seq(0);
        long after1 = seq(1);
        // over three resyncs (reconciles of the one KvWorker): made anew once, not on every reconcile
        harness.throughout(resync.multipliedBy(3), "KvWorker", 3, () -> {
            assertThat(seq(0)).isEqualTo(after0);
            assertThat(seq(1)).isEqualTo(after1);
        });
        assertThat(replicas)
                .allSatisfy(r -> assertThat(r.calls("POST /register")).isEqualTo(1));
    }

    private static ObjectMeta meta(String uid) {
        return new ObjectMetaBuilder()
                .withName("vllm-0")
                .withNamespace(NS)
                .withLabels(VLLM)
                .withUid(uid)
                .build();
    }
}
