package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.operator.client.WorkerRegistration;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration;
import io.kvindexer.operator.support.Resources;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ReregistrationsTest {
    private static final String ENDPOINT = "tcp://10.0.0.1:5557";
    private static final Set<String> REPLICAS = Set.of("kv-0", "kv-1", "kv-2");

    private static KvWorker worker(PodRegistration... pods) {
        KvWorker w = Resources.kvWorker("llm", "w", "kv", Map.of("app", "vllm"), "m", 16, 5557, null, 1);
        w.setStatus(new KvWorkerStatus(1L, 1, 1, List.of(pods), List.of()));
        return w;
    }

    private static DesiredRegistrations pod(String uid) {
        return new DesiredRegistrations(
                List.of(new EngineTarget("a", 7, List.of(new WorkerRegistration(7, 0, ENDPOINT, null)), uid)),
                Map.of());
    }

    private static PodRegistration registered(String uid, List<String> pending) {
        return new PodRegistration("a", "7", ENDPOINT, null, List.of("kv-0", "kv-1"), uid, pending);
    }

    private static ReplicaOutcome holding(String replica, long... ids) {
        Set<Long> registered = new java.util.HashSet<>();
        for (long id : ids) {
            registered.add(id);
        }
        return new ReplicaOutcome(replica, registered, Set.of(), 0, 0, null);
    }

    @Test
    void theSamePodRegisteredEverywhereIsLeftAlone() {
        Reregistrations r = Reregistrations.of(worker(registered("u1", null)), pod("u1"));

        assertThat(r).isSameAs(Reregistrations.NONE);
        assertThat(r.on("kv-0")).isEmpty();
    }

    @Test
    void anotherPodUnderTheNameIsMadeAnewEverywhereAndWhatFailedStaysPending() {
        DesiredRegistrations desired = pod("u2");
        Reregistrations r = Reregistrations.of(worker(registered("u1", null)), desired);

        assertThat(r.on("kv-0")).containsExactly(7L);
        assertThat(r.on("kv-2")).containsExactly(7L);
        // kv-1 answered an error, kv-2 was not Ready: both still to do
        assertThat(r.stillPending(desired.targets().getFirst(), List.of(holding("kv-0", 7), holding("kv-1")), REPLICAS))
                .containsExactly("kv-1", "kv-2");
        assertThat(r.stillPending(
                        desired.targets().getFirst(),
                        List.of(holding("kv-0", 7), holding("kv-1", 7)),
                        Set.of("kv-0", "kv-1")))
                .isNull();
    }

    @Test
    void aStatusWithoutUidCannotTellAndMakesItAnewOnce() {
        DesiredRegistrations desired = pod("u1");
        Reregistrations r = Reregistrations.of(worker(registered(null, null)), desired);

        assertThat(r.everywhere()).containsExactly(7L);
        // the next round reads the uid this one recorded: nothing more to do
        assertThat(Reregistrations.of(worker(registered("u1", null)), desired)).isSameAs(Reregistrations.NONE);
    }

    @Test
    void aPendingReplicaIsMadeAnewThereOnlyUntilItIsDoneOrGone() {
        DesiredRegistrations desired = pod("u2");
        Reregistrations r = Reregistrations.of(worker(registered("u2", List.of("kv-1", "kv-9"))), desired);

        assertThat(r.on("kv-0")).isEmpty();
        assertThat(r.on("kv-1")).containsExactly(7L);
        EngineTarget t = desired.targets().getFirst();
        assertThat(r.stillPending(t, List.of(holding("kv-0", 7), holding("kv-1")), REPLICAS))
                .as("kv-9 was scaled away")
                .containsExactly("kv-1");
        assertThat(r.stillPending(t, List.of(holding("kv-0", 7), holding("kv-1", 7)), REPLICAS))
                .isNull();
    }

    @Test
    void aPodNeverRegisteredHasNothingToReplace() {
        assertThat(Reregistrations.of(worker(), pod("u1"))).isSameAs(Reregistrations.NONE);
    }
}
