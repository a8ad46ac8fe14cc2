package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.client.WorkerRegistration;
import io.kvindexer.operator.worker.RegistrationPlan.Unregistration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class RegistrationPlanTest {
    private static final String M = "llama";
    private static final String T = "default";
    private static final int B = 16;

    private static WorkerRegistration reg(long id, int rank, String ip) {
        return new WorkerRegistration(id, rank, "tcp://" + ip + ":" + (5557 + rank), null);
    }

    private static RegisteredWorker actual(long id, String model, String tenant, Map<Integer, String> endpoints) {
        return new RegisteredWorker(id, model, tenant, B, "active", endpoints);
    }

    /** The plan for model {@code M}, tenant {@code T}, nothing owned and no replay endpoint changed. */
    private static RegistrationPlan plan(List<WorkerRegistration> desired, List<RegisteredWorker> actual) {
        return RegistrationPlan.of(desired, actual, M, T, B, Set.of(), Set.of());
    }

    @Test
    void anEmptyReplicaGetsEveryDesiredRank() {
        var plan = plan(List.of(reg(1, 0, "10.0.0.1"), reg(1, 1, "10.0.0.1"), reg(2, 0, "10.0.0.2")), List.of());
        assertThat(plan.toUnregister()).isEmpty();
        assertThat(plan.toRegister())
                .extracting(WorkerRegistration::instanceId, WorkerRegistration::dpRank)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(1L, 0),
                        org.assertj.core.groups.Tuple.tuple(1L, 1),
                        org.assertj.core.groups.Tuple.tuple(2L, 0));
    }

    @Test
    void aReplicaInSyncNeedsNothing() {
        var plan = RegistrationPlan.of(
                List.of(reg(1, 0, "10.0.0.1")),
                List.of(actual(1, M, T, Map.of(0, "tcp://10.0.0.1:5557"))),
                M,
                T,
                B,
                Set.of(1L),
                Set.of());
        assertThat(plan.isEmpty()).isTrue();
    }

    @Test
    void aGonePodThatWeOwnedIsUnregisteredRankByRank() {
        var plan = RegistrationPlan.of(
                List.of(),
                List.of(actual(7, M, T, Map.of(0, "tcp://10.0.0.7:5557", 1, "tcp://10.0.0.7:5558"))),
                M,
                T,
                B,
                Set.of(7L),
                Set.of());
        assertThat(plan.toUnregister()).containsExactly(new Unregistration(7, 0, M, T), new Unregistration(7, 1, M, T));
        assertThat(plan.toRegister()).isEmpty();
    }

    @Test
    void registrationsWeDoNotOwnAreLeftAlone() {
        var plan = RegistrationPlan.of(
                List.of(), List.of(actual(99, M, T, Map.of(0, "tcp://10.9.9.9:5557"))), M, T, B, Set.of(7L), Set.of());
        assertThat(plan.isEmpty()).isTrue();
    }

    @Test
    void anIpChangeIsUnregisterThenRegisterAtTheNewAddress() {
        var plan = plan(List.of(reg(3, 0, "10.0.0.30")), List.of(actual(3, M, T, Map.of(0, "tcp://10.0.0.3:5557"))));
        assertThat(plan.toUnregister()).containsExactly(new Unregistration(3, 0, M, T));
        assertThat(plan.toRegister()).containsExactly(reg(3, 0, "10.0.0.30"));
    }

    @Test
    void fewerRanksRemoveOnlyTheExtraRank() {
        var plan = plan(
                List.of(reg(4, 0, "10.0.0.4")),
                List.of(actual(4, M, T, new TreeMap<>(Map.of(0, "tcp://10.0.0.4:5557", 1, "tcp://10.0.0.4:5558")))));
        assertThat(plan.toUnregister()).containsExactly(new Unregistration(4, 1, M, T));
        assertThat(plan.toRegister()).isEmpty();
    }

    @Test
    void anOwnedInstanceUnderAnotherModelIsRemovedWithThatModel() {
        var plan = plan(
                List.of(reg(5, 0, "10.0.0.5")), List.of(actual(5, "old-model", T, Map.of(0, "tcp://10.0.0.5:5557"))));
        assertThat(plan.toUnregister()).containsExactly(new Unregistration(5, 0, "old-model", T));
        assertThat(plan.toRegister()).containsExactly(reg(5, 0, "10.0.0.5"));
    }

    @Test
    void aRegistrationUnderAnotherBlockSizeIsReplacedByOneUnderTheSpecsSize() {
        var plan = RegistrationPlan.of(
                List.of(reg(9, 0, "10.0.0.9"), reg(9, 1, "10.0.0.9")),
                List.of(actual(9, M, T, new TreeMap<>(Map.of(0, "tcp://10.0.0.9:5557", 1, "tcp://10.0.0.9:5558")))),
                M,
                T,
                32,
                Set.of(9L),
                Set.of());
        assertThat(plan.toUnregister()).containsExactly(new Unregistration(9, 0, M, T), new Unregistration(9, 1, M, T));
        assertThat(plan.toRegister()).containsExactly(reg(9, 0, "10.0.0.9"), reg(9, 1, "10.0.0.9"));
    }

    @Test
    void aReplicaThatDoesNotSayItsBlockSizeIsTakenAsItIs() {
        var plan = RegistrationPlan.of(
                List.of(reg(9, 0, "10.0.0.9")),
                List.of(new RegisteredWorker(9, M, T, 0, "active", Map.of(0, "tcp://10.0.0.9:5557"))),
                M,
                T,
                32,
                Set.of(9L),
                Set.of());
        assertThat(plan.isEmpty()).isTrue();
    }

    @Test
    void aChangedReplayEndpointForcesReRegistration() {
        var plan = RegistrationPlan.of(
                List.of(reg(6, 0, "10.0.0.6")),
                List.of(actual(6, M, T, Map.of(0, "tcp://10.0.0.6:5557"))),
                M,
                T,
                B,
                Set.of(),
                Set.of(6L));
        assertThat(plan.toUnregister()).containsExactly(new Unregistration(6, 0, M, T));
        assertThat(plan.toRegister()).containsExactly(reg(6, 0, "10.0.0.6"));
    }

    @Test
    void applyingThePlanThenPlanningAgainYieldsNothing() {
        List<WorkerRegistration> desired =
                List.of(reg(1, 0, "10.0.0.1"), reg(2, 0, "10.0.0.22"), reg(2, 1, "10.0.0.22"));
        List<RegisteredWorker> actual = List.of(
                actual(2, M, T, Map.of(0, "tcp://10.0.0.2:5557")), actual(8, M, T, Map.of(0, "tcp://10.0.0.8:5557")));
        var plan = RegistrationPlan.of(desired, actual, M, T, B, Set.of(8L), Set.of());

        // apply the plan to a model of the replica
        Map<Long, Map<Integer, String>> replica = new TreeMap<>();
        actual.forEach(w -> replica.put(w.instanceId(), new TreeMap<>(w.endpoints())));
        plan.toUnregister().forEach(u -> replica.get(u.instanceId()).remove(u.dpRank()));
        plan.toRegister()
                .forEach(r -> replica.computeIfAbsent(r.instanceId(), k -> new TreeMap<>())
                        .put(r.dpRank(), r.endpoint()));
        List<RegisteredWorker> after = new ArrayList<>();
        replica.forEach((id, eps) -> {
            if (!eps.isEmpty()) {
                after.add(actual(id, M, T, eps));
            }
        });

        assertThat(RegistrationPlan.of(desired, after, M, T, B, Set.of(8L), Set.of())
                        .isEmpty())
                .isTrue();
        assertThat(replica.get(8L)).as("owned leftover removed").isEmpty();
        assertThat(replica.get(2L)).containsEntry(0, "tcp://10.0.0.22:5557");
    }
}
