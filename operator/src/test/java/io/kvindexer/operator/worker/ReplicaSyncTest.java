package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.WorkerKey;
import io.kvindexer.operator.client.WorkerRegistration;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The replica sync step against an in-memory replica: what it sends, in which order, and what it reports. */
class ReplicaSyncTest {
    private static final IndexerEndpoint REPLICA = IndexerEndpoint.of("kv-0", "127.0.0.2", 8090);
    private FakeIndexerClient replica;
    private KvWorkerSpec spec;

    @BeforeEach
    void setUp() {
        replica = new FakeIndexerClient();
        spec = new KvWorkerSpec();
        spec.setModelName("llama");
        spec.setBlockSize(16);
    }

    private static EngineTarget target(String pod, long id, String ip, int ranks) {
        return new EngineTarget(
                pod,
                id,
                java.util.stream.IntStream.range(0, ranks)
                        .mapToObj(r -> new WorkerRegistration(id, r, "tcp://" + ip + ":" + (5557 + r), null))
                        .toList());
    }

    private static DesiredRegistrations desired(EngineTarget... targets) {
        return new DesiredRegistrations(List.of(targets), Map.of());
    }

    @Test
    void anEmptyReplicaGetsEveryRankAndTheOutcomeSaysSo() {
        ReplicaOutcome o = new ReplicaSync(replica, spec)
                .sync(REPLICA, desired(target("a", 1, "10.0.0.1", 2)), Set.of(), Set.of());
        assertThat(replica.keys()).containsExactlyInAnyOrder(new WorkerKey(1, 0), new WorkerKey(1, 1));
        assertThat(o.failed()).isFalse();
        assertThat(o.registered()).containsExactly(1L);
        assertThat(o.made()).isEqualTo(2);
        assertThat(o.removed()).isZero();
        // and a second sync changes nothing
        ReplicaOutcome again = new ReplicaSync(replica, spec)
                .sync(REPLICA, desired(target("a", 1, "10.0.0.1", 2)), Set.of(1L), Set.of());
        assertThat(again.made() + again.removed()).isZero();
    }

    @Test
    void aMovedPodIsUnregisteredBeforeItIsRegisteredAgain() {
        new ReplicaSync(replica, spec).sync(REPLICA, desired(target("a", 1, "10.0.0.1", 1)), Set.of(), Set.of());
        replica.calls.clear();
        ReplicaOutcome o = new ReplicaSync(replica, spec)
                .sync(REPLICA, desired(target("a", 1, "10.0.0.9", 1)), Set.of(1L), Set.of());
        assertThat(replica.calls).containsExactly("workers", "unregister 1/0", "register 1/0");
        assertThat(replica.registrations.get(new WorkerKey(1, 0)).endpoint()).isEqualTo("tcp://10.0.0.9:5557");
        assertThat(o.made()).isEqualTo(1);
        assertThat(o.removed()).isEqualTo(1);
    }

    @Test
    void aRankWhoseUnregistrationFailedIsNotRegisteredAndTheInstanceIsNotCounted() {
        new ReplicaSync(replica, spec).sync(REPLICA, desired(target("a", 1, "10.0.0.1", 2)), Set.of(), Set.of());
        replica.failUnregister.put(new WorkerKey(1, 1), 500);
        replica.calls.clear();
        ReplicaOutcome o = new ReplicaSync(replica, spec)
                .sync(REPLICA, desired(target("a", 1, "10.0.0.2", 2)), Set.of(1L), Set.of());
        assertThat(replica.calls).containsExactly("workers", "unregister 1/0", "unregister 1/1", "register 1/0");
        assertThat(o.failed()).isTrue();
        assertThat(o.error()).contains("500");
        assertThat(o.registered()).isEmpty();
        assertThat(o.leftovers()).as("still desired: not a leftover").isEmpty();
    }

    @Test
    void aGoneInstanceWhoseUnregistrationFailedIsALeftoverAndA404IsSuccess() {
        new ReplicaSync(replica, spec)
                .sync(
                        REPLICA,
                        desired(target("a", 1, "10.0.0.1", 1), target("b", 2, "10.0.0.2", 1)),
                        Set.of(),
                        Set.of());
        replica.failUnregister.put(new WorkerKey(1, 0), 503);
        replica.failUnregister.put(new WorkerKey(2, 0), 404);
        ReplicaOutcome o = new ReplicaSync(replica, spec).sync(REPLICA, desired(), Set.of(1L, 2L), Set.of());
        assertThat(o.leftovers()).containsExactly(1L);
        assertThat(o.error()).contains("503").doesNotContain("404");
        assertThat(o.removed()).isZero();
    }

    @Test
    void anUnreadableReplicaIsAnOutcomeWithAnErrorAndNoCalls() {
        replica.failReads = -1;
        ReplicaOutcome o = new ReplicaSync(replica, spec)
                .sync(REPLICA, desired(target("a", 1, "10.0.0.1", 1)), Set.of(), Set.of());
        assertThat(replica.calls).containsExactly("workers");
        assertThat(o.failed()).isTrue();
        assertThat(o.error()).contains("unreachable");
        assertThat(o.registered()).isEmpty();
    }

    @Test
    void theOutcomeFunctionIsPure() {
        RegistrationPlan plan = RegistrationPlan.of(
                List.of(
                        new WorkerRegistration(1, 0, "tcp://a:1", null),
                        new WorkerRegistration(2, 0, "tcp://b:1", null)),
                List.of(),
                "llama",
                "default",
                Set.of(),
                Set.of());
        ReplicaSync.Applied applied = new ReplicaSync.Applied(1, 0, Set.of(new WorkerKey(2, 0)), List.of("boom"));
        DesiredRegistrations d = desired(
                new EngineTarget("a", 1, List.of(plan.toRegister().get(0))),
                new EngineTarget("b", 2, List.of(plan.toRegister().get(1))));
        ReplicaOutcome first = ReplicaOutcome.of("kv-0", d, plan, applied);
        assertThat(first).isEqualTo(ReplicaOutcome.of("kv-0", d, plan, applied));
        assertThat(first.registered()).containsExactly(1L);
        assertThat(first.error()).isEqualTo("boom");
    }
}
