package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.e2e.LoopbackCluster.engineIp;
import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The real operator on the CRUD mock API server, real indexer servers as replicas, real engine simulators as engine
 * pods: the test plays the kubelet, the StatefulSet controller and cluster DNS (see {@link LoopbackCluster}).
 */
class OperatorEndToEndTest {
    /** Short, so that what heals or must hold over resyncs takes seconds. */
    private static final Duration RESYNC = Duration.ofSeconds(1);

    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(RESYNC);

    private static final int BLOCK = 4;

    private LoopbackCluster cluster;
    private String ns;
    private int port;
    private int zmqPort;
    private int replayPort;

    @BeforeEach
    void setUp(TestInfo info) {
        cluster = new LoopbackCluster(harness);
        ns = "e2e-"
                + info.getTestMethod()
                        .orElseThrow()
                        .getName()
                        .toLowerCase()
                        .replaceAll("[^a-z0-9]", "")
                        .substring(0, 20);
        port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(3));
        zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(3));
        replayPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(3));
    }

    /** Registrations, peers, scaling, deletions, a bad spec: nothing the operator asked is beyond its RBAC. */
    @AfterAll
    static void everyRequestIsOneTheRbacGrants() {
        harness.assertRequestsGranted();
    }

    /** Deletes what the test applied while the replicas still answer (the KvWorker finalizer needs them). */
    @AfterEach
    void tearDown() {
        try {
            harness.deleteKvWorkers(ns, WAIT);
            harness.client().resources(KvIndexer.class).inNamespace(ns).delete();
            harness.client().pods().inNamespace(ns).delete();
        } finally {
            cluster.close();
        }
    }

    private KvIndexer applyIndexer(int replicas) throws Exception {
        return cluster.startIndexer(ns, "kv", replicas, port);
    }

    private void applyWorker(Integer replay) {
        harness.create(Resources.kvWorker(ns, "vllm", "kv", VLLM, "llama", BLOCK, zmqPort, replay, 1));
    }

    private static long id(String ns, String pod) {
        return InstanceIds.hashOf(ns, pod);
    }

    /** What every replica should hold for these engine pods (pod → engine IP slot). */
    private Map<Long, String> engines(Map<String, Integer> pods) {
        return LoopbackCluster.engineEndpoints(ns, pods, zmqPort);
    }

    private List<RegisteredWorker> workers(KvIndexer kvi, int ordinal) {
        return cluster.http.workers(cluster.replica(kvi, ordinal), "llama", "default");
    }

    private void awaitRegistered(KvIndexer kvi, int ordinal, Map<Long, String> expected) {
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(workers(kvi, ordinal))
                        .as("registrations on replica %d", ordinal)
                        .extracting(
                                RegisteredWorker::instanceId, w -> w.endpoints().get(0))
                        .containsExactlyInAnyOrderElementsOf(expected.entrySet().stream()
                                .map(e -> org.assertj.core.groups.Tuple.tuple(e.getKey(), e.getValue()))
                                .toList()));
    }

    private static int[] tokens(int n, int offset) {
        return IntStream.rangeClosed(1, n).map(i -> i + offset).toArray();
    }

    /** Tokens matched for {@code instance} on one replica by /query; -1 while it does not answer. */
    private int matched(IndexerEndpoint replica, int[] tokens, long instance) {
        try {
            return cluster.matched(replica, "llama", tokens, instance);
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /** Scales the KvIndexer and waits until the operator carried it to the StatefulSet. */
    private void scaleTo(int replicas) {
        harness.mergePatch(KvIndexer.class, ns, "kv", "{\"spec\":{\"replicas\":" + replicas + "}}");
        await().atMost(WAIT).until(() -> harness.statefulSet(ns, "kv").getSpec().getReplicas() == replicas);
    }

    @Test
    void enginesAreRegisteredEverywhereFollowPodChangesAndAreQueryable() throws Exception {
        KvIndexer kvi = applyIndexer(2);
        EngineSimulator a = cluster.startEngine(ns, "vllm-a", VLLM, 0, zmqPort, replayPort);
        cluster.startEngine(ns, "vllm-b", VLLM, 1, zmqPort, replayPort);
        applyWorker(replayPort);

        Map<Long, String> both = engines(Map.of("vllm-a", 0, "vllm-b", 1));
        awaitRegistered(kvi, 0, both);
        awaitRegistered(kvi, 1, both);

        // the engine's blocks reach both replicas over real ZMQ
        await().atMost(WAIT).until(() -> a.subscriptions() >= 2);
        int[] prompt = tokens(8, 0);
        a.storeSequence(prompt, BLOCK).get();
        for (int r = 0; r < 2; r++) {
            IndexerEndpoint replica = cluster.replica(kvi, r);
            await().atMost(WAIT).until(() -> matched(replica, prompt, id(ns, "vllm-a")) == 8);
        }

        // both resources say so
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            KvWorker w = harness.kvWorker(ns, "vllm");
            assertThat(w.getStatus().registeredPods()).isEqualTo(2);
            assertThat(w.getStatus().pods())
                    .allSatisfy(p -> assertThat(p.registeredOn()).containsExactly("kv-0", "kv-1"));
            assertThat(Resources.condition(w.getStatus().conditions(), "Ready").getStatus())
                    .isEqualTo("True");
            KvIndexer k = cluster.kvIndexer(ns, "kv");
            assertThat(k.getStatus().ready()).isEqualTo("2/2");
            assertThat(Resources.condition(k.getStatus().conditions(), "Ready").getStatus())
                    .isEqualTo("True");
        });
        // each replica knows the other as a peer, by its stable URL
        assertThat(cluster.http.peers(cluster.replica(kvi, 0)))
                .containsExactly("https://kv-1.kv-peers." + ns + ".svc:" + port);
        assertThat(cluster.http.peers(cluster.replica(kvi, 1)))
                .containsExactly("https://kv-0.kv-peers." + ns + ".svc:" + port);

        // engine pod deleted → unregistered everywhere
        harness.deletePod(ns, "vllm-b");
        cluster.stopEngine(ns, "vllm-b");
        Map<Long, String> onlyA = engines(Map.of("vllm-a", 0));
        awaitRegistered(kvi, 0, onlyA);
        awaitRegistered(kvi, 1, onlyA);

        // pod IP change (same pod, new address) → re-registered at the new address, same instance id
        cluster.stopEngine(ns, "vllm-a");
        cluster.startEngine(ns, "vllm-a", VLLM, 2, zmqPort, replayPort);
        Map<Long, String> moved = engines(Map.of("vllm-a", 2));
        awaitRegistered(kvi, 0, moved);
        awaitRegistered(kvi, 1, moved);

        // an engine pod not Ready for longer than spec.unregisterAfterSeconds is unregistered too
        harness.mergePatch(KvWorker.class, ns, "vllm", "{\"spec\":{\"unregisterAfterSeconds\":1}}");
        harness.startEnginePod(ns, "vllm-a", VLLM, engineIp(2), false);
        awaitRegistered(kvi, 0, Map.of());
        awaitRegistered(kvi, 1, Map.of());
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(
                                harness.kvWorker(ns, "vllm").getStatus().matchedPods())
                        .isZero());
    }

    /** Reasons of the Events on this test's KvWorker. */
    private List<String> workerEvents() {
        return harness.client().v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> "vllm".equals(e.getInvolvedObject().getName()))
                .map(e -> e.getReason())
                .toList();
    }

    @Test
    void aReadinessFlapKeepsTheRegistrationAndANewReplayEndpointKeepsTheBlocks() throws Exception {
        KvIndexer kvi = applyIndexer(1); // spec.unregisterGraceSeconds: default 120
        EngineSimulator a = cluster.startEngine(ns, "vllm-a", VLLM, 0, zmqPort, replayPort);
        applyWorker(null); // spec.unregisterAfterSeconds: default 60; the replay port is told later
        awaitRegistered(kvi, 0, engines(Map.of("vllm-a", 0)));
        await().atMost(WAIT).until(() -> a.subscriptions() >= 1);
        IndexerEndpoint replica = cluster.replica(kvi, 0);
        long id = id(ns, "vllm-a");
        int[] prompt = tokens(16, 300);
        a.storeSequence(prompt, BLOCK).get();
        await().atMost(WAIT).until(() -> matched(replica, prompt, id) == 16);
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> harness.kvWorker(ns, "vllm")
                        .getStatus()
                        .pods()
                        .getFirst()
                        .registeredOn()
                        .equals(List.of("kv-0")));

        // Ready → NotReady over three resyncs, then Ready: never unregistered, and what the engine stores meanwhile
        // is indexed
        harness.startEnginePod(ns, "vllm-a", VLLM, engineIp(0), false);
        int[] during = tokens(8, 400);
        a.storeSequence(during, BLOCK).get();
        harness.throughout(RESYNC.multipliedBy(3), "KvWorker", 3, () -> {
            assertThat(cluster.registrations(replica, "llama")).containsKey(id);
            assertThat(matched(replica, prompt, id)).isEqualTo(16);
        });
        await().atMost(WAIT).until(() -> matched(replica, during, id) == 8);
        harness.startEnginePod(ns, "vllm-a", VLLM, engineIp(0), true);
        assertThat(workerEvents()).as("events on the KvWorker").doesNotContain("Unregistered");

        // the replay endpoint becomes known: registered again with it, and the blocks are still there (the indexer
        // keeps them through its grace period), including new ones stored under the old prefix
        harness.mergePatch(KvWorker.class, ns, "vllm", "{\"spec\":{\"replayPort\":" + replayPort + "}}");
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(harness.kvWorker(ns, "vllm")
                                .getStatus()
                                .pods()
                                .getFirst()
                                .replayEndpoint())
                        .isEqualTo("tcp://" + engineIp(0) + ":" + replayPort));
        await().atMost(WAIT).until(() -> workerEvents().contains("Unregistered"));
        awaitRegistered(kvi, 0, engines(Map.of("vllm-a", 0)));
        await().atMost(WAIT).until(() -> matched(replica, prompt, id) == 16);
        int[] longer = tokens(24, 300);
        a.storeSequence(longer, BLOCK).get();
        await().atMost(WAIT).until(() -> matched(replica, longer, id) == 24);
    }

    @Test
    void aRestartedReplicaGetsItsRegistrationsBackAndRecoversItsTreeFromAPeer() throws Exception {
        KvIndexer kvi = applyIndexer(2);
        EngineSimulator a = cluster.startEngine(ns, "vllm-a", VLLM, 0, zmqPort, null);
        applyWorker(null); // no replay: after the restart, the blocks can only come from the peer's /dump
        Map<Long, String> expected = engines(Map.of("vllm-a", 0));
        awaitRegistered(kvi, 0, expected);
        awaitRegistered(kvi, 1, expected);
        await().atMost(WAIT).until(() -> a.subscriptions() >= 2);
        int[] prompt = tokens(12, 100);
        a.storeSequence(prompt, BLOCK).get();
        await().atMost(WAIT).until(() -> matched(cluster.replica(kvi, 0), prompt, id(ns, "vllm-a")) == 12);
        await().atMost(WAIT).until(() -> matched(cluster.replica(kvi, 1), prompt, id(ns, "vllm-a")) == 12);

        // replica 1 restarts: a new, empty server at the same address
        cluster.killReplica(ns, "kv", 1);
        cluster.startReplica(ns, "kv", 1);

        awaitRegistered(kvi, 1, expected);
        await().atMost(WAIT).until(() -> matched(cluster.replica(kvi, 1), prompt, id(ns, "vllm-a")) == 12);
    }

    @Test
    void scalingTwoToThreeToOneKeepsPeersAndRegistrationsInStep() throws Exception {
        KvIndexer kvi = applyIndexer(2);
        cluster.startEngine(ns, "vllm-a", VLLM, 0, zmqPort, replayPort);
        applyWorker(replayPort);
        Map<Long, String> expected = engines(Map.of("vllm-a", 0));
        awaitRegistered(kvi, 1, expected);

        scaleTo(3);
        KvIndexer three = cluster.kvIndexer(ns, "kv");
        cluster.startReplica(ns, "kv", 2);
        awaitRegistered(three, 2, expected);
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(cluster.http.peers(cluster.replica(three, 0)))
                    .containsExactlyInAnyOrder(
                            "https://kv-1.kv-peers." + ns + ".svc:" + port,
                            "https://kv-2.kv-peers." + ns + ".svc:" + port);
            assertThat(cluster.http.peers(cluster.replica(three, 2)))
                    .containsExactlyInAnyOrder(
                            "https://kv-0.kv-peers." + ns + ".svc:" + port,
                            "https://kv-1.kv-peers." + ns + ".svc:" + port);
            assertThat(cluster.kvIndexer(ns, "kv").getStatus().ready()).isEqualTo("3/3");
        });

        scaleTo(1);
        cluster.removeReplica(ns, "kv", 2);
        cluster.removeReplica(ns, "kv", 1);
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            assertThat(cluster.http.peers(cluster.replica(three, 0))).isEmpty();
            assertThat(cluster.kvIndexer(ns, "kv").getStatus().ready()).isEqualTo("1/1");
            assertThat(harness.client()
                            .policy()
                            .v1()
                            .podDisruptionBudget()
                            .inNamespace(ns)
                            .withName("kv")
                            .get())
                    .isNull();
            assertThat(harness.kvWorker(ns, "vllm")
                            .getStatus()
                            .pods()
                            .getFirst()
                            .registeredOn())
                    .containsExactly("kv-0");
        });
    }

    @Test
    void deletingTheKvWorkerUnregistersItsEnginesFromEveryReplica() throws Exception {
        KvIndexer kvi = applyIndexer(2);
        cluster.startEngine(ns, "vllm-a", VLLM, 0, zmqPort, replayPort);
        cluster.startEngine(ns, "vllm-b", VLLM, 1, zmqPort, replayPort);
        applyWorker(replayPort);
        awaitRegistered(kvi, 0, engines(Map.of("vllm-a", 0, "vllm-b", 1)));
        assertThat(harness.kvWorker(ns, "vllm").getMetadata().getFinalizers()).isNotEmpty();

        harness.client()
                .resources(KvWorker.class)
                .inNamespace(ns)
                .withName("vllm")
                .delete();

        awaitRegistered(kvi, 0, Map.of());
        awaitRegistered(kvi, 1, Map.of());
        await().atMost(WAIT).until(() -> harness.kvWorker(ns, "vllm") == null);
    }

    /**
     * The classic mistake: the KvWorker's zmqPort is the engine's replay port. The replica registers the pod but never
     * connects (a ROUTER refuses a SUB); the KvWorker says so, which pod, which replica and why, and stays Ready.
     */
    @Test
    void aKvWorkerPointedAtTheEnginesReplayPortIsDegradedNotConnectedWithWhy() throws Exception {
        applyIndexer(1);
        cluster.startEngine(ns, "vllm-a", VLLM, 0, zmqPort, replayPort);
        harness.create(Resources.kvWorker(ns, "vllm", "kv", VLLM, "llama", BLOCK, replayPort, null, 1));
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            KvWorker w = harness.kvWorker(ns, "vllm");
            Condition degraded = Resources.condition(w.getStatus().conditions(), "Degraded");
            assertThat(degraded.getStatus()).isEqualTo("True");
            assertThat(degraded.getReason()).isEqualTo("NotConnected");
            assertThat(degraded.getMessage())
                    .startsWith("1 engine rank(s) not connected: vllm-a rank 0 on kv-0: ")
                    .contains("ROUTER");
            assertThat(Resources.condition(w.getStatus().conditions(), "Ready").getStatus())
                    .isEqualTo("True");
        });
    }

    @Test
    void aReplicaThatIsDownDegradesTheStatusWithoutBlockingTheOtherAndHealsWhenBack() throws Exception {
        KvIndexer kvi = applyIndexer(2);
        cluster.startEngine(ns, "vllm-a", VLLM, 0, zmqPort, replayPort);
        applyWorker(replayPort);
        awaitRegistered(kvi, 1, engines(Map.of("vllm-a", 0)));

        cluster.killReplica(ns, "kv", 1); // the pod still looks Ready: the operator finds out by calling it
        cluster.startEngine(ns, "vllm-b", VLLM, 1, zmqPort, replayPort);

        Map<Long, String> both = engines(Map.of("vllm-a", 0, "vllm-b", 1));
        awaitRegistered(kvi, 0, both);
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            KvWorker w = harness.kvWorker(ns, "vllm");
            Condition degraded = Resources.condition(w.getStatus().conditions(), "Degraded");
            assertThat(degraded.getStatus()).isEqualTo("True");
            assertThat(degraded.getMessage()).contains("kv-1");
            assertThat(Resources.condition(w.getStatus().conditions(), "Ready").getStatus())
                    .isEqualTo("False");
        });
        // ... and Kubernetes Events on the KvWorker say what happened
        assertThat(harness.client().v1().events().inNamespace(ns).list().getItems())
                .filteredOn(e -> "vllm".equals(e.getInvolvedObject().getName()))
                .extracting(e -> e.getReason())
                .contains("Registered", "ReplicaSyncFailed");

        cluster.startReplica(ns, "kv", 1); // back, empty
        awaitRegistered(kvi, 1, both);
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            KvWorker w = harness.kvWorker(ns, "vllm");
            assertThat(Resources.condition(w.getStatus().conditions(), "Degraded")
                            .getStatus())
                    .isEqualTo("False");
            assertThat(Resources.condition(w.getStatus().conditions(), "Ready").getStatus())
                    .isEqualTo("True");
            assertThat(w.getStatus().registeredPods()).isEqualTo(2);
        });
    }

    @Test
    void aBadSpecOrAMissingIndexerIsAConditionWithAMessage() throws Exception {
        KvWorker bad = Resources.kvWorker(ns, "bad", "kv", VLLM, "llama", 0, zmqPort, null, 1);
        harness.client().resources(KvWorker.class).inNamespace(ns).resource(bad).create();
        KvWorker orphan = Resources.kvWorker(ns, "orphan", "nowhere", VLLM, "llama", 16, zmqPort, null, 1);
        harness.client()
                .resources(KvWorker.class)
                .inNamespace(ns)
                .resource(orphan)
                .create();

        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            Condition ready =
                    Resources.condition(harness.kvWorker(ns, "bad").getStatus().conditions(), "Ready");
            assertThat(ready.getStatus()).isEqualTo("False");
            assertThat(ready.getReason()).isEqualTo("InvalidSpec");
            assertThat(ready.getMessage()).contains("spec.blockSize").contains("0");
            Condition missing = Resources.condition(
                    harness.kvWorker(ns, "orphan").getStatus().conditions(), "Ready");
            assertThat(missing.getReason()).isEqualTo("IndexerNotFound");
            assertThat(missing.getMessage()).contains("nowhere");
        });
        // fixing the spec heals it (level-triggered)
        harness.mergePatch(KvWorker.class, ns, "bad", "{\"spec\":{\"blockSize\":16}}");
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(Resources.condition(
                                        harness.kvWorker(ns, "bad").getStatus().conditions(), "Ready")
                                .getReason())
                        .isEqualTo("IndexerNotFound"));
    }
}
