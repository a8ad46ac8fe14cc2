package io.kvindexer.operator.e2e;

import static io.kvindexer.operator.support.OperatorHarness.WAIT;
import static io.kvindexer.operator.support.Resources.VLLM;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import io.kvindexer.operator.worker.InstanceIds;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A user edits a running KvWorker (kubectl edit / apply): the replicas end up holding what the new spec says, as if
 * the KvWorker had been created that way. Real indexer replicas on the mock API server; the engine pods are pod
 * objects only (registration never waits for the engine).
 */
class KvWorkerEditsEndToEndTest {
    /**
     * Short, so that "never, over several resyncs" checks take a second or two ({@link #overResyncs} also counts the
     * reconciles, so a loaded machine that fits fewer into the period still gets them all).
     */
    private static final Duration RESYNC = Duration.ofMillis(500);

    @RegisterExtension
    static final OperatorHarness harness = OperatorHarness.onMockApiServer(RESYNC);

    private LoopbackCluster cluster;
    private String ns;
    private int zmqPort;

    @BeforeEach
    void setUp(TestInfo info) {
        cluster = new LoopbackCluster(harness);
        ns = "edit-"
                + info.getTestMethod()
                        .orElseThrow()
                        .getName()
                        .toLowerCase()
                        .replaceAll("[^a-z0-9]", "")
                        .substring(0, 20);
        zmqPort = LoopbackCluster.freePort(LoopbackCluster.engineIps(2));
    }

    /** Edits, finalizers, former KvIndexers left: nothing the operator asked is beyond its RBAC. */
    @AfterAll
    static void everyRequestIsOneTheRbacGrants() {
        harness.assertRequestsGranted();
    }

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

    private KvIndexer indexer(String name) throws Exception {
        return cluster.startIndexer(ns, name, 1, LoopbackCluster.freePort(LoopbackCluster.replicaIps(1)));
    }

    private List<RegisteredWorker> workers(KvIndexer kvi) {
        return cluster.http.workers(cluster.replica(kvi, 0), "llama", "default");
    }

    /** Waits until {@code kvi}'s replica holds engine {@code id} and no other. */
    private void awaitOnly(KvIndexer kvi, long id) {
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(workers(kvi))
                        .extracting(RegisteredWorker::instanceId)
                        .containsExactly(id));
    }

    private void engine(String pod, int k) {
        harness.startEnginePod(ns, pod, VLLM, LoopbackCluster.engineIp(k), true);
    }

    private KvWorker worker(String indexer, int blockSize) {
        return harness.create(Resources.kvWorker(ns, "vllm", indexer, VLLM, "llama", blockSize, zmqPort, null, 1));
    }

    @Test
    void aChangedBlockSizeIsWhatTheReplicasHold() throws Exception {
        KvIndexer kvi = indexer("kv");
        engine("vllm-a", 0);
        engine("vllm-b", 1);
        worker("kv", 16);
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(workers(kvi))
                        .extracting(RegisteredWorker::blockSize)
                        .containsExactly(16, 16));

        // the engines run with --block-size 32 after all: the user corrects the KvWorker
        harness.mergePatch(KvWorker.class, ns, "vllm", "{\"spec\":{\"blockSize\":32}}");

        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(workers(kvi))
                        .extracting(RegisteredWorker::instanceId, RegisteredWorker::blockSize)
                        .containsExactlyInAnyOrder(
                                org.assertj.core.groups.Tuple.tuple(InstanceIds.hashOf(ns, "vllm-a"), 32),
                                org.assertj.core.groups.Tuple.tuple(InstanceIds.hashOf(ns, "vllm-b"), 32)));
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                harness.kvWorker(ns, "vllm").getStatus().registeredPods())
                        .isEqualTo(2));
    }

    @Test
    void aChangedIndexerRefMovesTheEnginesToTheOtherKvIndexer() throws Exception {
        KvIndexer a = indexer("kv-a");
        KvIndexer b = indexer("kv-b");
        engine("vllm-a", 0);
        worker("kv-a", 16);
        long id = InstanceIds.hashOf(ns, "vllm-a");
        awaitOnly(a, id);

        harness.mergePatch(KvWorker.class, ns, "vllm", "{\"spec\":{\"indexerRef\":\"kv-b\"}}");

        awaitOnly(b, id);
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(workers(a))
                        .as("kv-a no longer feeds on the engines of a KvWorker that points elsewhere")
                        .isEmpty());
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                harness.kvWorker(ns, "vllm").getStatus().pods())
                        .singleElement()
                        .satisfies(p -> assertThat(p.registeredOn()).containsExactly("kv-b-0")));
    }

    @Test
    void anIndexerRefToAKvIndexerThatDoesNotExistUnregistersFromTheFormerAndSaysSo() throws Exception {
        KvIndexer a = indexer("kv-a");
        engine("vllm-a", 0);
        worker("kv-a", 16);
        long id = InstanceIds.hashOf(ns, "vllm-a");
        awaitOnly(a, id);

        // a typo, or a KvIndexer not created yet: the engines leave kv-a all the same
        harness.mergePatch(KvWorker.class, ns, "vllm", "{\"spec\":{\"indexerRef\":\"kv-b\"}}");
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(workers(a))
                        .as("kv-a no longer holds the engines of a KvWorker that names another KvIndexer")
                        .isEmpty());
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            var status = harness.kvWorker(ns, "vllm").getStatus();
            assertThat(Resources.condition(status.conditions(), "Ready"))
                    .satisfies(c -> assertThat(c.getReason()).isEqualTo("IndexerNotFound"))
                    .satisfies(c -> assertThat(c.getMessage()).contains("kv-b"));
            assertThat(status.pods())
                    .singleElement()
                    .satisfies(p -> assertThat(p.registeredOn()).isEmpty());
        });

        // the KvIndexer is created: registered there
        KvIndexer b = indexer("kv-b");
        awaitOnly(b, id);
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                harness.kvWorker(ns, "vllm").getStatus().pods())
                        .singleElement()
                        .satisfies(p -> assertThat(p.registeredOn()).containsExactly("kv-b-0")));
        assertThat(workers(a)).isEmpty();
    }

    @Test
    void aKvIndexerDeletedWhileItsReplicasStillRunIsLeftAndOneCreatedAgainIsJoined() throws Exception {
        int port = LoopbackCluster.freePort(LoopbackCluster.replicaIps(1));
        KvIndexer kvi = cluster.startIndexer(ns, "kv", 1, port);
        engine("vllm-a", 0);
        worker("kv", 16);
        long id = InstanceIds.hashOf(ns, "vllm-a");
        await().atMost(WAIT).ignoreExceptions().until(() -> models(kvi).size() == 1);

        // deleted with --cascade=orphan (or its garbage collection not done yet): the replica still runs
        harness.client()
                .resources(KvIndexer.class)
                .inNamespace(ns)
                .withName("kv")
                .delete();
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(models(kvi))
                        .as("the replica of a deleted KvIndexer no longer holds the engines")
                        .isEmpty());
        await().atMost(WAIT).ignoreExceptions().untilAsserted(() -> {
            var status = harness.kvWorker(ns, "vllm").getStatus();
            assertThat(Resources.condition(status.conditions(), "Ready").getReason())
                    .isEqualTo("IndexerNotFound");
            assertThat(status.pods())
                    .singleElement()
                    .satisfies(p -> assertThat(p.registeredOn()).isEmpty());
        });

        // created again under the same name (its replica pods anew): the KvWorker registers there
        cluster.removeReplica(ns, "kv", 0);
        KvIndexer again = cluster.startIndexer(ns, "kv", 1, port);
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(models(again)).containsExactly(java.util.Map.entry(id, "llama")));
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                harness.kvWorker(ns, "vllm").getStatus().pods())
                        .singleElement()
                        .satisfies(p -> assertThat(p.registeredOn()).containsExactly("kv-0")));
    }

    /** Instance id → model of every registration on the replica, all models. */
    private java.util.Map<Long, String> models(KvIndexer kvi) {
        java.util.Map<Long, String> out = new java.util.HashMap<>();
        cluster.http.workers(cluster.replica(kvi, 0)).forEach(w -> out.put(w.instanceId(), w.modelName()));
        return out;
    }

    /** The KvWorker's Ready condition comes to give {@code reason}. */
    private void awaitReadyReason(String reason) {
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(Resources.condition(
                                        harness.kvWorker(ns, "vllm").getStatus().conditions(), "Ready")
                                .getReason())
                        .isEqualTo(reason));
    }

    private void deleteWorker() {
        harness.client()
                .resources(KvWorker.class)
                .inNamespace(ns)
                .withName("vllm")
                .delete();
    }

    /**
     * Asserts {@code check} on every look over three resyncs of each of {@code workers} KvWorkers (three resync
     * periods, and as many KvWorker reconciles started): it must hold throughout, not only in the end.
     */
    private static void overResyncs(int workers, Runnable check) throws InterruptedException {
        harness.throughout(RESYNC.multipliedBy(3), "KvWorker", 3 * workers, check);
    }

    @Test
    void aPodTwoKvWorkersSelectIsRegisteredByTheFirstAndTheSecondSaysSo() throws Exception {
        KvIndexer kvi = indexer("kv");
        engine("vllm-a", 0);
        long id = InstanceIds.hashOf(ns, "vllm-a");
        harness.create(Resources.kvWorker(ns, "a-first", "kv", VLLM, "llama", 16, zmqPort, null, 1));
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> "llama".equals(models(kvi).get(id)));

        // a second KvWorker with the same selector and another model: a mistake the operator must not act out
        harness.create(Resources.kvWorker(ns, "b-second", "kv", VLLM, "mistral", 16, zmqPort, null, 1));
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(Resources.condition(
                                        harness.kvWorker(ns, "b-second")
                                                .getStatus()
                                                .conditions(),
                                        "Degraded")
                                .getMessage())
                        .contains("vllm-a")
                        .contains("a-first"));
        // several resyncs: the registration is never taken over by the second
        overResyncs(2, () -> assertThat(models(kvi)).containsExactly(java.util.Map.entry(id, "llama")));
        assertThat(harness.kvWorker(ns, "a-first").getStatus().registeredPods()).isEqualTo(1);
    }

    @Test
    void deletingOneOfTwoKvWorkersThatSelectAPodKeepsItRegistered() throws Exception {
        KvIndexer kvi = indexer("kv");
        engine("vllm-a", 0);
        long id = InstanceIds.hashOf(ns, "vllm-a");
        // a KvWorker being replaced by an identical one under another name (a rename, a migration)
        harness.create(Resources.kvWorker(ns, "a-old", "kv", VLLM, "llama", 16, zmqPort, null, 1));
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> "llama".equals(models(kvi).get(id)));
        harness.create(Resources.kvWorker(ns, "b-new", "kv", VLLM, "llama", 16, zmqPort, null, 1));
        await().atMost(WAIT).until(() -> harness.kvWorker(ns, "b-new").getStatus() != null);

        harness.client()
                .resources(KvWorker.class)
                .inNamespace(ns)
                .withName("a-old")
                .delete();
        await().atMost(WAIT).until(() -> harness.kvWorker(ns, "a-old") == null);
        overResyncs(1, () -> assertThat(models(kvi)).containsExactly(java.util.Map.entry(id, "llama")));
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                harness.kvWorker(ns, "b-new").getStatus().registeredPods())
                        .isEqualTo(1));
    }

    @Test
    void theFirstOfTwoKvWorkersMovingToAnotherKvIndexerLeavesThePodToTheSecond() throws Exception {
        KvIndexer a = indexer("kv-a");
        KvIndexer b = indexer("kv-b");
        engine("vllm-a", 0);
        long id = InstanceIds.hashOf(ns, "vllm-a");
        harness.create(Resources.kvWorker(ns, "a-first", "kv-a", VLLM, "llama", 16, zmqPort, null, 1));
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> "llama".equals(models(a).get(id)));
        harness.create(Resources.kvWorker(ns, "b-second", "kv-a", VLLM, "llama", 16, zmqPort, null, 1));
        await().atMost(WAIT).until(() -> harness.kvWorker(ns, "b-second").getStatus() != null);

        // the first moves to kv-b: the second, which selects the same pod, now registers it on kv-a
        harness.mergePatch(KvWorker.class, ns, "a-first", "{\"spec\":{\"indexerRef\":\"kv-b\"}}");
        overResyncs(2, () -> assertThat(models(a)).containsExactly(java.util.Map.entry(id, "llama")));
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> "llama".equals(models(b).get(id)));
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                harness.kvWorker(ns, "b-second").getStatus().registeredPods())
                        .isEqualTo(1));
    }

    @Test
    void aSelectorThatNoLongerSelectsAPodLeavesItToTheKvWorkerThatStillDoes() throws Exception {
        KvIndexer kvi = indexer("kv");
        engine("vllm-a", 0);
        long id = InstanceIds.hashOf(ns, "vllm-a");
        harness.create(Resources.kvWorker(ns, "a-first", "kv", VLLM, "llama", 16, zmqPort, null, 1));
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> "llama".equals(models(kvi).get(id)));
        harness.create(Resources.kvWorker(ns, "b-second", "kv", VLLM, "llama", 16, zmqPort, null, 1));
        await().atMost(WAIT).until(() -> harness.kvWorker(ns, "b-second").getStatus() != null);

        // the first is narrowed to other pods: the second, which still selects this one, keeps it registered
        harness.mergePatch(
                KvWorker.class, ns, "a-first", "{\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"none\"}}}}");
        overResyncs(2, () -> assertThat(models(kvi)).containsExactly(java.util.Map.entry(id, "llama")));
        await().atMost(WAIT).untilAsserted(() -> {
            assertThat(harness.kvWorker(ns, "a-first").getStatus().pods()).isEmpty();
            assertThat(harness.kvWorker(ns, "b-second").getStatus().registeredPods())
                    .isEqualTo(1);
        });
    }

    @Test
    void aKvWorkerDeletedWhileItsPodIsNotReadyUnregistersItThoughAnotherSelectsIt() throws Exception {
        KvIndexer kvi = indexer("kv");
        engine("vllm-a", 0);
        long id = InstanceIds.hashOf(ns, "vllm-a");
        harness.create(Resources.kvWorker(ns, "a-first", "kv", VLLM, "llama", 16, zmqPort, null, 1));
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> "llama".equals(models(kvi).get(id)));
        harness.create(Resources.kvWorker(ns, "b-second", "kv", VLLM, "llama", 16, zmqPort, null, 1));
        await().atMost(WAIT).until(() -> harness.kvWorker(ns, "b-second").getStatus() != null);

        // not Ready: the first keeps it registered for its unregisterAfterSeconds (60 s), the second never takes
        // a pod that is not Ready, so deleting the first must not leave it standing with nobody to remove it
        harness.startEnginePod(ns, "vllm-a", VLLM, LoopbackCluster.engineIp(0), false);
        // a resync period and three KvWorker reconciles: the operator has seen the pod not Ready (and kept it)
        // before the first is deleted
        harness.throughout(RESYNC, "KvWorker", 3, () -> assertThat(models(kvi)).containsKey(id));
        harness.client()
                .resources(KvWorker.class)
                .inNamespace(ns)
                .withName("a-first")
                .delete();
        await().atMost(WAIT).until(() -> harness.kvWorker(ns, "a-first") == null);
        await().atMost(WAIT).ignoreExceptions().until(() -> models(kvi).isEmpty());
    }

    @Test
    void aSelectorThatSelectsNothingUnregistersAndTheOldOneRegistersAgain() throws Exception {
        KvIndexer kvi = indexer("kv");
        engine("vllm-a", 0);
        engine("vllm-b", 1);
        worker("kv", 16);
        await().atMost(WAIT).ignoreExceptions().until(() -> models(kvi).size() == 2);

        harness.mergePatch(
                KvWorker.class, ns, "vllm", "{\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"none\"}}}}");
        await().atMost(WAIT).ignoreExceptions().until(() -> models(kvi).isEmpty());
        await().atMost(WAIT).untilAsserted(() -> {
            var status = harness.kvWorker(ns, "vllm").getStatus();
            assertThat(status.matchedPods()).isZero();
            assertThat(status.pods()).isEmpty();
        });

        harness.mergePatch(
                KvWorker.class, ns, "vllm", "{\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"vllm\"}}}}");
        await().atMost(WAIT).ignoreExceptions().until(() -> models(kvi).size() == 2);
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                harness.kvWorker(ns, "vllm").getStatus().registeredPods())
                        .isEqualTo(2));
    }

    @Test
    void aKvWorkerCreatedBeforeItsKvIndexerWaitsForItAndSaysWhy() throws Exception {
        engine("vllm-a", 0);
        worker("kv", 16);
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(Resources.condition(
                                harness.kvWorker(ns, "vllm").getStatus().conditions(), "Ready"))
                        .satisfies(c -> assertThat(c.getReason()).isEqualTo("IndexerNotFound"))
                        .satisfies(
                                c -> assertThat(c.getMessage()).contains("kv").contains(ns)));

        KvIndexer kvi = indexer("kv");
        long id = InstanceIds.hashOf(ns, "vllm-a");
        await().atMost(WAIT)
                .ignoreExceptions()
                .until(() -> "llama".equals(models(kvi).get(id)));
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(Resources.condition(
                                        harness.kvWorker(ns, "vllm").getStatus().conditions(), "Ready")
                                .getStatus())
                        .isEqualTo("True"));
    }

    @Test
    void aPodWithTwoRanksThatMovesWhileReadyIsRegisteredAtItsNewAddressAndFewerRanksDropOne() throws Exception {
        KvIndexer kvi = indexer("kv");
        engine("vllm-a", 0);
        harness.create(Resources.kvWorker(ns, "vllm", "kv", VLLM, "llama", 16, zmqPort, null, 2));
        String at0 = "tcp://" + LoopbackCluster.engineIp(0) + ":";
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(workers(kvi))
                        .singleElement()
                        .satisfies(w -> assertThat(w.endpoints())
                                .containsExactly(
                                        java.util.Map.entry(0, at0 + zmqPort),
                                        java.util.Map.entry(1, at0 + (zmqPort + 1)))));

        engine("vllm-a", 1); // the same pod, Ready throughout, at another IP
        String at1 = "tcp://" + LoopbackCluster.engineIp(1) + ":";
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(workers(kvi))
                        .singleElement()
                        .satisfies(w -> assertThat(w.endpoints())
                                .containsExactly(
                                        java.util.Map.entry(0, at1 + zmqPort),
                                        java.util.Map.entry(1, at1 + (zmqPort + 1)))));
        await().atMost(WAIT)
                .untilAsserted(() -> assertThat(
                                harness.kvWorker(ns, "vllm").getStatus().pods())
                        .singleElement()
                        .satisfies(p -> assertThat(p.endpoint()).isEqualTo(at1 + zmqPort)));

        harness.mergePatch(KvWorker.class, ns, "vllm", "{\"spec\":{\"dataParallelSize\":1}}");
        await().atMost(WAIT)
                .ignoreExceptions()
                .untilAsserted(() -> assertThat(workers(kvi))
                        .singleElement()
                        .satisfies(
                                w -> assertThat(w.endpoints()).containsExactly(java.util.Map.entry(0, at1 + zmqPort))));
    }

    @Test
    void aKvIndexerDeletedUnderItsKvWorkerIsReportedAndTheKvWorkerCanStillBeDeleted() throws Exception {
        KvIndexer kvi = indexer("kv");
        engine("vllm-a", 0);
        worker("kv", 16);
        await().atMost(WAIT).ignoreExceptions().until(() -> models(kvi).size() == 1);

        harness.client()
                .resources(KvIndexer.class)
                .inNamespace(ns)
                .withName("kv")
                .delete();
        awaitReadyReason("IndexerNotFound");
        // its replicas go with it (garbage collection, which the mock does not run): the finalizer does not wait
        deleteWorker();
        await().atMost(WAIT).until(() -> harness.kvWorker(ns, "vllm") == null);
    }

    /**
     * A KvWorker edited into a spec the operator refuses (ranks past the last port: within the schema) keeps what it
     * registered, and deleting it then unregisters its engines from every replica, as deleting any KvWorker does.
     */
    @Test
    void refusedSpecThenDeletedUnregistersTheKvWorkersEngines() throws Exception {
        KvIndexer kvi = indexer("kv");
        engine("vllm-a", 0);
        worker("kv", 16);
        awaitOnly(kvi, InstanceIds.hashOf(ns, "vllm-a"));

        harness.mergePatch(KvWorker.class, ns, "vllm", "{\"spec\":{\"zmqPort\":65000,\"dataParallelSize\":600}}");
        awaitReadyReason("InvalidSpec");
        assertThat(workers(kvi)).as("refused: left as it was").hasSize(1);

        deleteWorker();
        await().atMost(WAIT).until(() -> harness.kvWorker(ns, "vllm") == null);
        assertThat(workers(kvi)).as("the replica after the finalizer ran").isEmpty();
    }
}
