package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** spec.unregisterAfterSeconds: which not-Ready engine pods stay registered, and until when. */
class ReadinessHoldTest {
    private static final Instant T0 = Instant.parse("2026-03-04T05:06:00Z");

    /** A KvWorker (hold 60 s) whose status says pod "a" is registered at 10.0.0.1 and "b" is not registered. */
    private static KvWorker worker(int seconds) {
        KvWorker w = Resources.kvWorker("ns", "w", "kv", Map.of("app", "x"), "m", 16, 5557, null, 1);
        w.getSpec().setUnregisterAfterSeconds(seconds);
        w.setStatus(new KvWorkerStatus(
                1L,
                1,
                1,
                List.of(
                        new PodRegistration("a", "7", "tcp://10.0.0.1:5557", null, List.of("kv-0")),
                        new PodRegistration("b", "8", "tcp://10.0.0.2:5557", null, List.of())),
                List.of()));
        return w;
    }

    private static Pod pod(String name, String ip, boolean ready, Instant since) {
        Pod p = OperatorHarness.pod(
                new ObjectMetaBuilder().withName(name).withNamespace("ns").build(), ip, ready);
        p.getStatus().getConditions().getFirst().setLastTransitionTime(since == null ? null : since.toString());
        return p;
    }

    @Test
    void aRegisteredPodNotReadyForLessThanTheHoldStaysUntilItRunsOut() {
        ReadinessHold hold = ReadinessHold.of(
                worker(60),
                List.of(pod("a", "10.0.0.1", false, T0), pod("b", "10.0.0.2", false, T0)),
                T0.plusSeconds(20));
        assertThat(hold.held()).containsExactly("a");
        assertThat(hold.recheckIn()).isEqualTo(Duration.ofSeconds(40).plusMillis(100));
        assertThat(DesiredRegistrations.of(worker(60).getSpec(), List.of(pod("a", "10.0.0.1", false, T0)), hold)
                        .targets())
                .extracting(EngineTarget::pod)
                .containsExactly("a");

        assertThat(ReadinessHold.of(worker(60), List.of(pod("a", "10.0.0.1", false, T0)), T0.plusSeconds(60)))
                .as("ran out")
                .isEqualTo(ReadinessHold.NONE);
    }

    @Test
    void nothingIsHeldThatMovedIsTerminatingHasNoTransitionTimeOrWhenTheHoldIsZero() {
        Instant now = T0.plusSeconds(1);
        assertThat(ReadinessHold.of(worker(60), List.of(pod("a", "10.0.0.9", false, T0)), now)
                        .held())
                .as("moved to another address")
                .isEmpty();
        Pod terminating = pod("a", "10.0.0.1", false, T0);
        terminating.getMetadata().setDeletionTimestamp(T0.toString());
        assertThat(ReadinessHold.of(worker(60), List.of(terminating), now).held())
                .as("terminating")
                .isEmpty();
        assertThat(ReadinessHold.of(worker(60), List.of(pod("a", "10.0.0.1", false, null)), now)
                        .held())
                .as("no transition time")
                .isEmpty();
        assertThat(ReadinessHold.of(worker(0), List.of(pod("a", "10.0.0.1", false, T0)), now))
                .isEqualTo(ReadinessHold.NONE);
        assertThat(ReadinessHold.of(worker(60), List.of(pod("a", "10.0.0.1", true, T0)), now)
                        .held())
                .as("Ready: registered as usual, nothing to hold")
                .isEmpty();
    }

    @Test
    void aPodCreatedAgainUnderTheNameIsNotHeldWhileAStatusWithoutUidsHoldsAsBefore() {
        KvWorker w = worker(60);
        w.setStatus(new KvWorkerStatus(
                1L,
                1,
                1,
                List.of(new PodRegistration("a", "7", "tcp://10.0.0.1:5557", null, List.of("kv-0"), "uid-1")),
                List.of()));
        Pod same = pod("a", "10.0.0.1", false, T0);
        same.getMetadata().setUid("uid-1");
        Pod recreated = pod("a", "10.0.0.1", false, T0);
        recreated.getMetadata().setUid("uid-2");
        Instant now = T0.plusSeconds(1);
        assertThat(ReadinessHold.of(w, List.of(same), now).held()).containsExactly("a");
        assertThat(ReadinessHold.of(w, List.of(recreated), now).held())
                .as("another pod under the name: a new engine, not a flap")
                .isEmpty();

        // a status an older operator wrote has no uid: read as before, and the pod is held as before
        KvWorkerStatus old = io.fabric8.kubernetes.client.utils.Serialization.unmarshal(
                "{\"pods\":[{\"pod\":\"a\",\"instanceId\":\"7\",\"endpoint\":\"tcp://10.0.0.1:5557\","
                        + "\"registeredOn\":[\"kv-0\"]}]}",
                KvWorkerStatus.class);
        assertThat(old.pods()).singleElement().returns(null, PodRegistration::uid);
        w.setStatus(old);
        assertThat(ReadinessHold.of(w, List.of(recreated), now).held()).containsExactly("a");
    }
}
