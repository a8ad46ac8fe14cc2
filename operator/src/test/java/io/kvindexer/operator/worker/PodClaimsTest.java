package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.support.OperatorHarness;
import io.kvindexer.operator.support.Resources;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PodClaimsTest {
    private static KvWorker worker(String name, String created, Map<String, String> selector) {
        KvWorker w = Resources.kvWorker("llm", name, "kv", selector, "m", 16, 5557, null, 1);
        w.getMetadata().setCreationTimestamp(created);
        return w;
    }

    private static Pod pod(Map<String, String> labels) {
        return OperatorHarness.pod(
                new ObjectMetaBuilder().withName("p").withLabels(labels).build(), "10.0.0.1", true);
    }

    private final Pod vllm = pod(Map.of("app", "vllm", "model", "llama"));

    @Test
    void theKvWorkerCreatedFirstRegistersAPodBothSelect() {
        KvWorker older = worker("zz-old", "2026-01-01T00:00:00Z", Map.of("app", "vllm"));
        KvWorker newer = worker("aa-new", "2026-01-01T00:00:01Z", Map.of("model", "llama"));
        assertThat(new PodClaims(newer, List.of(older)).earlier(vllm)).contains(older);
        assertThat(new PodClaims(older, List.of(newer)).earlier(vllm)).isEmpty();
        assertThat(new PodClaims(older, List.of(newer)).selectedByOther(vllm)).isTrue();
    }

    @Test
    void withinOneSecondTheNameDecides() {
        KvWorker a = worker("a", "2026-01-01T00:00:00Z", Map.of("app", "vllm"));
        KvWorker b = worker("b", "2026-01-01T00:00:00Z", Map.of("app", "vllm"));
        assertThat(new PodClaims(b, List.of(a)).earlier(vllm)).contains(a);
        assertThat(new PodClaims(a, List.of(b)).earlier(vllm)).isEmpty();
    }

    @Test
    void aPodOnlyThisKvWorkerSelectsIsItsOwn() {
        KvWorker self = worker("a", "2026-01-01T00:00:05Z", Map.of("app", "vllm"));
        KvWorker other = worker("b", "2026-01-01T00:00:00Z", Map.of("app", "sglang"));
        assertThat(new PodClaims(self, List.of(other)).earlier(vllm)).isEmpty();
        assertThat(new PodClaims(self, List.of(other)).selectedByOther(vllm)).isFalse();
    }
}
