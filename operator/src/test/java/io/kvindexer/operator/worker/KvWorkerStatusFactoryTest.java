package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.kvindexer.operator.client.WorkerRegistration;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration;
import io.kvindexer.operator.support.Resources;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class KvWorkerStatusFactoryTest {
    private final KvWorkerStatusFactory factory =
            new KvWorkerStatusFactory(Clock.fixed(Instant.parse("2026-01-02T03:04:05Z"), ZoneOffset.UTC));

    private static KvWorker worker() {
        KvWorker w = Resources.kvWorker("llm", "w", "kv", Map.of("app", "vllm"), "m", 16, 5557, null, 1);
        w.getMetadata().setGeneration(2L);
        return w;
    }

    private static EngineTarget target(String pod, long id) {
        return new EngineTarget(pod, id, List.of(new WorkerRegistration(id, 0, "tcp://10.0.0." + id + ":5557", null)));
    }

    private static Condition cond(KvWorker w, String type) {
        return Resources.condition(w.getStatus().conditions(), type);
    }

    @Test
    void allRegisteredEverywhereIsReady() {
        var desired = new DesiredRegistrations(List.of(target("a", 1), target("b", 2)), Map.of());
        KvWorker patch = factory.status(
                worker(),
                desired,
                List.of(
                        new ReplicaOutcome("kv-0", Set.of(1L, 2L), Set.of(), 2, 0, null),
                        new ReplicaOutcome("kv-1", Set.of(1L, 2L), Set.of(), 2, 0, null)));
        KvWorkerStatus s = patch.getStatus();
        assertThat(s.matchedPods()).isEqualTo(2);
        assertThat(s.registeredPods()).isEqualTo(2);
        assertThat(s.pods()).extracting(PodRegistration::registeredOn).containsOnly(List.of("kv-0", "kv-1"));
        assertThat(s.pods().getFirst().instanceId()).isEqualTo("1");
        assertThat(cond(patch, "Ready").getStatus()).isEqualTo("True");
        assertThat(cond(patch, "Degraded").getStatus()).isEqualTo("False");
        assertThat(cond(patch, "Ready").getObservedGeneration()).isEqualTo(2L);
    }

    @Test
    void anUnreachableReplicaIsDegradedAndNamed() {
        var desired = new DesiredRegistrations(List.of(target("a", 1)), Map.of());
        KvWorker patch = factory.status(
                worker(),
                desired,
                List.of(
                        new ReplicaOutcome("kv-0", Set.of(1L), Set.of(), 1, 0, null),
                        new ReplicaOutcome("kv-1", Set.of(), Set.of(), 0, 0, "kv-1 unreachable: ConnectException")));
        assertThat(patch.getStatus().registeredPods()).isZero();
        assertThat(patch.getStatus().pods().getFirst().registeredOn()).containsExactly("kv-0");
        assertThat(cond(patch, "Ready").getStatus()).isEqualTo("False");
        assertThat(cond(patch, "Degraded").getStatus()).isEqualTo("True");
        assertThat(cond(patch, "Degraded").getMessage()).contains("kv-1").contains("unreachable");
    }

    @Test
    void aGonePodStaysListedWhileItMayStillBeRegistered() {
        KvWorker w = worker();
        w.setStatus(new KvWorkerStatus(
                1L, 1, 1, List.of(new PodRegistration("gone", "9", "tcp://x:1", null, List.of("kv-0"))), List.of()));
        var none = new DesiredRegistrations(List.of(), Map.of());
        KvWorker stillUnknown =
                factory.status(w, none, List.of(new ReplicaOutcome("kv-0", Set.of(), Set.of(), 0, 0, "down")));
        assertThat(stillUnknown.getStatus().pods())
                .extracting(PodRegistration::pod)
                .containsExactly("gone");
        KvWorker cleaned = factory.status(w, none, List.of(new ReplicaOutcome("kv-0", Set.of(), Set.of(), 0, 1, null)));
        assertThat(cleaned.getStatus().pods()).isEmpty();
    }

    @Test
    void aReplicaOfTheFormerKvIndexerStaysListedUntilItLetTheEngineGo() {
        KvWorker w = worker(); // indexerRef kv; the engine was registered on old-0 before
        w.setStatus(new KvWorkerStatus(
                1L, 1, 1, List.of(new PodRegistration("a", "1", "tcp://10.0.0.1:5557", null, List.of("old-0"))), null));
        var desired = new DesiredRegistrations(List.of(target("a", 1)), Map.of());
        List<ReplicaOutcome> now = List.of(new ReplicaOutcome("kv-0", Set.of(1L), Set.of(), 1, 0, null));

        KvWorker down = factory.status(
                w, desired, now, List.of(new ReplicaOutcome("old-0", Set.of(), Set.of(), 0, 0, "old-0 unreachable")));
        assertThat(down.getStatus().pods().getFirst().registeredOn()).containsExactly("kv-0", "old-0");
        assertThat(down.getStatus().registeredPods())
                .as("counted on the current KvIndexer")
                .isEqualTo(1);
        assertThat(cond(down, "Degraded").getMessage()).contains("old-0 unreachable");

        KvWorker left =
                factory.status(w, desired, now, List.of(new ReplicaOutcome("old-0", Set.of(), Set.of(), 0, 1, null)));
        assertThat(left.getStatus().pods().getFirst().registeredOn()).containsExactly("kv-0");
        assertThat(cond(left, "Ready").getStatus()).isEqualTo("True");
    }

    @Test
    void aRankNotExactOnAReplicaDegradesTheWorkerAndSaysWhichAndWhy() {
        var desired = new DesiredRegistrations(List.of(target("a", 1), target("b", 2)), Map.of());
        var degraded = new io.kvindexer.operator.client.ListenerExactness("degraded", "unrecoverable gap", "t0");
        var replaying = new io.kvindexer.operator.client.ListenerExactness("replaying", null, null);
        KvWorker patch = factory.status(
                worker(),
                desired,
                List.of(
                        new ReplicaOutcome(
                                "kv-0",
                                Set.of(1L, 2L),
                                Set.of(),
                                0,
                                0,
                                null,
                                Map.of(new io.kvindexer.operator.client.WorkerKey(2, 0), degraded)),
                        new ReplicaOutcome(
                                "kv-1",
                                Set.of(1L, 2L),
                                Set.of(),
                                0,
                                0,
                                null,
                                Map.of(new io.kvindexer.operator.client.WorkerKey(1, 0), replaying))));
        Condition c = cond(patch, "Degraded");
        assertThat(c.getStatus()).isEqualTo("True");
        assertThat(c.getReason()).isEqualTo("NotExact");
        assertThat(c.getMessage())
                .isEqualTo("2 engine rank(s) not exact: a rank 0 on kv-1: replaying; b rank 0 on kv-0: degraded"
                        + " (unrecoverable gap) since t0");
        assertThat(cond(patch, "Ready").getStatus())
                .as("registered everywhere: Ready still")
                .isEqualTo("True");

        // a rank the replica is not connected to comes first, with why
        var refused = new io.kvindexer.operator.client.ListenerExactness("not connected", "Connection refused", null);
        KvWorker down = factory.status(
                worker(),
                desired,
                List.of(new ReplicaOutcome(
                        "kv-0",
                        Set.of(1L, 2L),
                        Set.of(),
                        0,
                        0,
                        null,
                        Map.of(
                                new io.kvindexer.operator.client.WorkerKey(1, 0),
                                refused,
                                new io.kvindexer.operator.client.WorkerKey(2, 0),
                                degraded))));
        assertThat(cond(down, "Degraded").getReason()).isEqualTo("NotConnected");
        assertThat(cond(down, "Degraded").getMessage())
                .isEqualTo("1 engine rank(s) not connected: a rank 0 on kv-0: Connection refused; 1 engine rank(s) not"
                        + " exact: b rank 0 on kv-0: degraded (unrecoverable gap) since t0");

        KvWorker exact = factory.status(
                worker(), desired, List.of(new ReplicaOutcome("kv-0", Set.of(1L, 2L), Set.of(), 0, 0, null)));
        assertThat(cond(exact, "Degraded").getStatus()).isEqualTo("False");
        assertThat(cond(exact, "Degraded").getReason()).isEqualTo("AsExpected");
    }

    /** A list that counts the elements read from it (a stream or a loop over it reads each once). */
    private static final class CountingList<T> extends java.util.AbstractList<T> implements java.util.RandomAccess {
        private final List<T> items;
        long reads;

        CountingList(List<T> items) {
            this.items = items;
        }

        @Override
        public T get(int i) {
            reads++;
            return items.get(i);
        }

        @Override
        public int size() {
            return items.size();
        }
    }

    /**
     * The status of a fleet is built in a few passes over its pods, not a pass over the status's pods for every
     * engine pod: at 2,000 pods × 3 replicas (a former replica down, then every pod gone) the pods are read a few
     * times each (they were read 2,000 times each: 6 to 16 ms a reconcile at 1,000 pods, quadratic beyond).
     */
    @Test
    void buildingTheStatusReadsEachPodAFewTimesNotOncePerPod() {
        int n = 2000;
        List<EngineTarget> targets = new java.util.ArrayList<>();
        List<PodRegistration> listed = new java.util.ArrayList<>();
        Set<Long> ids = new java.util.HashSet<>();
        for (int i = 0; i < n; i++) {
            long id = 1000 + i;
            targets.add(target("p" + i, id));
            listed.add(new PodRegistration(
                    "p" + i, Long.toString(id), "tcp://x:1", null, List.of("kv-0", "kv-1", "kv-2", "old-0")));
            ids.add(id);
        }
        CountingList<EngineTarget> desiredTargets = new CountingList<>(targets);
        CountingList<PodRegistration> statusPods = new CountingList<>(listed);
        KvWorker w = worker();
        w.setStatus(new KvWorkerStatus(1L, n, n, statusPods, List.of()));
        List<ReplicaOutcome> outcomes = List.of(
                new ReplicaOutcome("kv-0", ids, Set.of(), 0, 0, null),
                new ReplicaOutcome("kv-1", ids, Set.of(), 0, 0, null),
                new ReplicaOutcome("kv-2", ids, Set.of(), 0, 0, null));
        List<ReplicaOutcome> formerDown = List.of(new ReplicaOutcome("old-0", Set.of(), Set.of(), 0, 0, "down"));

        KvWorker steady = factory.status(w, new DesiredRegistrations(desiredTargets, Map.of()), outcomes, formerDown);
        KvWorker gone = factory.status(w, new DesiredRegistrations(List.of(), Map.of()), outcomes, formerDown);

        assertThat(steady.getStatus().pods())
                .hasSize(n)
                .allSatisfy(p -> assertThat(p.registeredOn()).containsExactly("kv-0", "kv-1", "kv-2", "old-0"));
        assertThat(gone.getStatus().pods())
                .hasSize(n)
                .allSatisfy(p -> assertThat(p.registeredOn()).containsExactly("old-0"));
        assertThat(desiredTargets.reads + statusPods.reads).isLessThan(20L * n);
    }
}
