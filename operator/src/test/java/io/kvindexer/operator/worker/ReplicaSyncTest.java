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

    /**
     * A replica that stops answering midway: the calls after the first that found it unreachable are not made (each
     * would wait out the timeouts in turn), and every rank not registered is failed, for the next reconcile.
     */
    @Test
    void noMoreCallsGoToAReplicaOnceOneFoundItUnreachable() {
        replica.failRegister.put(new WorkerKey(2, 0), -1);
        ReplicaOutcome o = new ReplicaSync(replica, spec)
                .sync(
                        REPLICA,
                        desired(
                                target("a", 1, "10.0.0.1", 1),
                                target("b", 2, "10.0.0.2", 1),
                                target("c", 3, "10.0.0.3", 2)),
                        Set.of(),
                        Set.of());
        assertThat(replica.calls).containsExactly("workers", "register 1/0", "register 2/0");
        assertThat(o.failed()).isTrue();
        assertThat(o.made()).isEqualTo(1);
        assertThat(o.error()).contains("unreachable").contains("2 more calls not made");
        assertThat(o.registered()).containsExactly(1L);
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
                16,
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

    /** A clock the test moves. */
    private static final class Ticking extends java.time.Clock {
        java.time.Instant now = java.time.Instant.parse("2026-03-04T05:06:00Z");

        @Override
        public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
        }

        @Override
        public java.time.Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public java.time.Instant instant() {
            return now;
        }
    }

    @Test
    void withMemoryAChangeOfOnePodCostsOnlyItsCallsUntilAFullReadIsDue() {
        Ticking clock = new Ticking();
        KnownRegistrations known = new KnownRegistrations(java.time.Duration.ofSeconds(30));
        ReplicaSync sync = new ReplicaSync(replica, spec, known, "ns/w", clock);
        EngineTarget[] fleet = java.util.stream.IntStream.range(0, 100)
                .mapToObj(i -> target("p" + i, 1000 + i, "10.0.1." + i, 1))
                .toArray(EngineTarget[]::new);
        sync.sync(REPLICA, "uid-1", desired(fleet), Set.of(), Set.of());
        assertThat(replica.calls).hasSize(101).startsWith("workers");

        // one pod moves, another goes: its calls only, no read of the fleet
        replica.calls.clear();
        EngineTarget[] changed = java.util.Arrays.copyOf(fleet, 99);
        changed[0] = target("p0", 1000, "10.0.2.1", 1);
        Set<Long> owned =
                java.util.stream.LongStream.range(1000, 1100).boxed().collect(java.util.stream.Collectors.toSet());
        ReplicaOutcome o = sync.sync(REPLICA, "uid-1", desired(changed), owned, Set.of());
        assertThat(replica.calls).containsExactly("unregister 1000/0", "unregister 1099/0", "register 1000/0");
        assertThat(o.registered()).hasSize(99);

        // nothing changed: no call at all
        replica.calls.clear();
        sync.sync(REPLICA, "uid-1", desired(changed), owned, Set.of());
        assertThat(replica.calls).isEmpty();

        // what changed behind the operator's back is found by the next full read: on the resync period ...
        replica.registrations.remove(new WorkerKey(1005, 0));
        clock.now = clock.now.plusSeconds(30);
        replica.calls.clear();
        sync.sync(REPLICA, "uid-1", desired(changed), owned, Set.of());
        assertThat(replica.calls).containsExactly("workers", "register 1005/0");
        // ... for a new incarnation of the replica (restarted empty) ...
        replica.registrations.clear();
        replica.calls.clear();
        sync.sync(REPLICA, "uid-1-restarted", desired(changed), owned, Set.of());
        assertThat(replica.calls).hasSize(100).startsWith("workers");
        // ... and after a failed call
        replica.failRegister.put(new WorkerKey(2000, 0), 500);
        EngineTarget[] more = java.util.Arrays.copyOf(changed, 100);
        more[99] = target("q", 2000, "10.0.3.1", 1);
        sync.sync(REPLICA, "uid-1-restarted", desired(more), owned, Set.of());
        replica.failRegister.clear();
        replica.calls.clear();
        sync.sync(REPLICA, "uid-1-restarted", desired(more), owned, Set.of());
        assertThat(replica.calls).containsExactly("workers", "register 2000/0");
    }

    @Test
    void ranksTheReplicaSaysAreNotExactAreReportedUntilTheNextFullReadSaysOtherwise() {
        Ticking clock = new Ticking();
        ReplicaSync sync =
                new ReplicaSync(replica, spec, new KnownRegistrations(java.time.Duration.ofSeconds(30)), "ns/w", clock);
        var degraded = new io.kvindexer.operator.client.ListenerExactness("degraded", "unrecoverable gap", "t0");
        sync.sync(REPLICA, "uid", desired(target("a", 1, "10.0.0.1", 2)), Set.of(), Set.of());
        replica.exactness.put(new WorkerKey(1, 1), degraded);
        replica.exactness.put(
                new WorkerKey(1, 0), new io.kvindexer.operator.client.ListenerExactness("exact", null, null));
        // not read yet: nothing known of it
        assertThat(sync.sync(REPLICA, "uid", desired(target("a", 1, "10.0.0.1", 2)), Set.of(1L), Set.of())
                        .notExact())
                .isEmpty();
        // the next full read finds it, and it is remembered between full reads
        clock.now = clock.now.plusSeconds(30);
        ReplicaOutcome read = sync.sync(REPLICA, "uid", desired(target("a", 1, "10.0.0.1", 2)), Set.of(1L), Set.of());
        assertThat(read.notExact()).containsExactly(java.util.Map.entry(new WorkerKey(1, 1), degraded));
        replica.calls.clear();
        ReplicaOutcome recalled =
                sync.sync(REPLICA, "uid", desired(target("a", 1, "10.0.0.1", 2)), Set.of(1L), Set.of());
        assertThat(replica.calls).isEmpty();
        assertThat(recalled.notExact()).containsOnlyKeys(new WorkerKey(1, 1));
        // gone when the pod is: nothing to report of an engine that is not ours any more
        assertThat(sync.sync(REPLICA, "uid", desired(), Set.of(1L), Set.of()).notExact())
                .isEmpty();
    }
}
