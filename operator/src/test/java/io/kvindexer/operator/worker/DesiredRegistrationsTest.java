package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.kvindexer.operator.client.WorkerRegistration;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import io.kvindexer.operator.support.OperatorHarness;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DesiredRegistrationsTest {

    private static Pod pod(String name, String ip, boolean ready, Map<String, String> annotations) {
        return OperatorHarness.pod(
                new ObjectMetaBuilder()
                        .withNamespace("llm")
                        .withName(name)
                        .withAnnotations(annotations)
                        .build(),
                ip,
                ready);
    }

    private static KvWorkerSpec spec(Integer replayPort, int ranks) {
        KvWorkerSpec s = new KvWorkerSpec();
        s.setModelName("m");
        s.setBlockSize(16);
        s.setZmqPort(5557);
        s.setReplayPort(replayPort);
        s.setDataParallelSize(ranks);
        return s;
    }

    @Test
    void everyReadyPodWithAnIpTimesEveryRank() {
        var desired = DesiredRegistrations.of(
                spec(5600, 2),
                List.of(
                        pod("b", "10.0.0.2", true, null), pod("a", "10.0.0.1", true, null),
                        pod("unready", "10.0.0.3", false, null), pod("no-ip", null, true, null)));
        assertThat(desired.targets()).extracting(EngineTarget::pod).containsExactly("a", "b");
        long a = InstanceIds.hashOf("llm", "a");
        assertThat(desired.targets().getFirst().registrations())
                .containsExactly(
                        new WorkerRegistration(a, 0, "tcp://10.0.0.1:5557", "tcp://10.0.0.1:5600", "a"),
                        new WorkerRegistration(a, 1, "tcp://10.0.0.1:5558", "tcp://10.0.0.1:5601", "a"));
        assertThat(desired.podErrors()).isEmpty();
    }

    @Test
    void anIpv6PodGetsBracketedPublishAndReplayEndpointsOnEveryRank() {
        var desired = DesiredRegistrations.of(spec(5600, 2), List.of(pod("v6", "fd00:10::7", true, null)));
        assertThat(desired.targets().getFirst().registrations())
                .extracting(WorkerRegistration::endpoint, WorkerRegistration::replayEndpoint)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("tcp://[fd00:10::7]:5557", "tcp://[fd00:10::7]:5600"),
                        org.assertj.core.groups.Tuple.tuple("tcp://[fd00:10::7]:5558", "tcp://[fd00:10::7]:5601"));
        assertThat(desired.targets().getFirst().registrations())
                .extracting(WorkerRegistration::podName)
                .as("sent as pod_name")
                .containsOnly("v6");
        assertThat(io.kvindexer.operator.client.IndexerEndpoint.of("kv-0", "fd00:10::2", 8090)
                        .baseUrl())
                .hasToString("http://[fd00:10::2]:8090");
    }

    @Test
    void withoutReplayPortThereIsNoReplayEndpointAndIpv6IsBracketed() {
        var desired = DesiredRegistrations.of(spec(null, 1), List.of(pod("v6", "fd00::1", true, null)));
        assertThat(desired.targets().getFirst().registrations().getFirst().endpoint())
                .isEqualTo("tcp://[fd00::1]:5557");
        assertThat(desired.targets().getFirst().replayEndpoint()).isNull();
    }

    @Test
    void podsWithBadOrClashingIdsAreReportedNotRegistered() {
        KvWorkerSpec s = spec(null, 1);
        s.setInstanceIdAnnotation("id");
        var desired = DesiredRegistrations.of(
                s,
                List.of(
                        pod("a", "10.0.0.1", true, Map.of("id", "7")),
                        pod("b", "10.0.0.2", true, Map.of("id", "7")),
                        pod("c", "10.0.0.3", true, Map.of("id", "x"))));
        assertThat(desired.targets()).extracting(EngineTarget::pod).containsExactly("a");
        assertThat(desired.podErrors()).containsOnlyKeys("b", "c");
        assertThat(desired.podErrors().get("b")).contains("already used by pod a");
    }
}
