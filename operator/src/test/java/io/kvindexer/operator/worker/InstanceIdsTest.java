package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.dynatrace.hash4j.hashing.Hashing;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InstanceIdsTest {

    private static Pod pod(String ns, String name, String ip, Map<String, String> annotations) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace(ns)
                .withName(name)
                .withAnnotations(annotations)
                .endMetadata()
                .withNewStatus()
                .withPodIP(ip)
                .endStatus()
                .build();
    }

    @Test
    void theHashIsXxh3OfNamespaceSlashNameWithTheTopBitCleared() {
        long expected =
                Hashing.xxh3_64().hashBytesToLong("llm/vllm-0".getBytes(StandardCharsets.UTF_8)) & Long.MAX_VALUE;
        assertThat(InstanceIds.of(pod("llm", "vllm-0", "10.0.0.1", null), null))
                .isEqualTo(expected)
                .isPositive();
    }

    @Test
    void theHashDoesNotDependOnTheIpAndDiffersBetweenPods() {
        long a = InstanceIds.of(pod("llm", "vllm-0", "10.0.0.1", null), null);
        assertThat(InstanceIds.of(pod("llm", "vllm-0", "10.9.9.9", null), null)).isEqualTo(a);
        assertThat(InstanceIds.of(pod("llm", "vllm-1", "10.0.0.1", null), null)).isNotEqualTo(a);
        assertThat(InstanceIds.of(pod("other", "vllm-0", "10.0.0.1", null), null))
                .isNotEqualTo(a);
    }

    @Test
    void theAnnotationWinsAndIsReadUnsigned() {
        Pod p = pod("llm", "vllm-0", "10.0.0.1", Map.of("kvindexer.io/instance-id", "18446744073709551615"));
        assertThat(InstanceIds.of(p, "kvindexer.io/instance-id")).isEqualTo(-1L);
    }

    @Test
    void aMissingOrBadAnnotationIsAClearError() {
        assertThatThrownBy(() -> InstanceIds.of(pod("llm", "vllm-0", "ip", Map.of()), "id"))
                .hasMessageContaining("vllm-0")
                .hasMessageContaining("no annotation id");
        assertThatThrownBy(() -> InstanceIds.of(pod("llm", "vllm-0", "ip", Map.of("id", "-3")), "id"))
                .hasMessageContaining("not an unsigned 64-bit integer");
    }
}
