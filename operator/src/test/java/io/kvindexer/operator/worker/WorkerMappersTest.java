package io.kvindexer.operator.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus;
import io.kvindexer.operator.support.Resources;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class WorkerMappersTest {
    @SuppressWarnings("unchecked")
    private final IndexerResourceCache<KvWorker> cache = mock(IndexerResourceCache.class);

    private static KvWorker worker(String name, String indexer, Map<String, String> selector) {
        return Resources.kvWorker("llm", name, indexer, selector, "m", 16, 5557, null, 1);
    }

    private static Pod pod(Map<String, String> labels) {
        return new PodBuilder()
                .withNewMetadata()
                .withNamespace("llm")
                .withName("p")
                .withLabels(labels)
                .endMetadata()
                .build();
    }

    @Test
    void anEnginePodMapsToTheWorkersWhoseSelectorMatchesIt() {
        KvWorker llama = worker("llama", "kv", Map.of("app", "vllm", "model", "llama"));
        KvWorker all = worker("all", "kv", Map.of("app", "vllm"));
        KvWorker bad = worker("bad", "kv", Map.of());
        bad.getSpec()
                .setSelector(new LabelSelectorBuilder()
                        .addNewMatchExpression()
                        .withKey("k")
                        .withOperator("Like")
                        .endMatchExpression()
                        .build());
        when(cache.list("llm")).thenAnswer(i -> Stream.of(llama, all, bad));

        assertThat(WorkerMappers.enginePodToWorkers(cache).toPrimaryResourceIDs(pod(Map.of("app", "vllm"))))
                .containsExactly(new ResourceID("all", "llm"));
        when(cache.list("llm")).thenAnswer(i -> Stream.of(llama, all, bad));
        assertThat(WorkerMappers.enginePodToWorkers(cache)
                        .toPrimaryResourceIDs(pod(Map.of("app", "vllm", "model", "llama"))))
                .containsExactlyInAnyOrder(new ResourceID("all", "llm"), new ResourceID("llama", "llm"));
    }

    /** A pod that lost the label its KvWorker selects by still maps to it while it is registered (in its status). */
    @Test
    void anEnginePodThatNoLongerMatchesMapsToTheWorkerThatListsIt() {
        KvWorker holder = worker("holder", "kv", Map.of("app", "vllm"));
        holder.setStatus(new KvWorkerStatus(
                1L,
                1,
                1,
                List.of(new KvWorkerStatus.PodRegistration("p", "7", "tcp://10.0.0.1:5557", null, List.of("kv-0"))),
                List.of()));
        KvWorker other = worker("other", "kv", Map.of("app", "sglang"));
        when(cache.list("llm")).thenAnswer(i -> Stream.of(holder, other));

        assertThat(WorkerMappers.enginePodToWorkers(cache).toPrimaryResourceIDs(pod(Map.of("app", "quarantined"))))
                .containsExactly(new ResourceID("holder", "llm"));
    }

    @Test
    void indexerPodsAndIndexersMapThroughTheIndexerRefIndex() {
        KvWorker w = worker("w", "kv", Map.of("app", "vllm"));
        when(cache.byIndex(WorkerMappers.BY_INDEXER_REF, "llm/kv")).thenReturn(List.of(w));
        Pod replica = pod(Map.of(IndexerNames.LABEL_INSTANCE, "kv"));

        assertThat(WorkerMappers.indexerPodToWorkers(cache).toPrimaryResourceIDs(replica))
                .containsExactly(new ResourceID("w", "llm"));
        assertThat(WorkerMappers.indexerPodToWorkers(cache).toPrimaryResourceIDs(pod(Map.of())))
                .isEmpty();
        assertThat(WorkerMappers.indexerToWorkers(cache)
                        .toPrimaryResourceIDs(Resources.kvIndexer("llm", "kv", 2, 8090)))
                .containsExactly(new ResourceID("w", "llm"));
        assertThat(WorkerMappers.indexerRefKey(w)).containsExactly("llm/kv");
        assertThat(WorkerMappers.workerToIndexer().toSecondaryResourceIDs(w))
                .containsExactly(new ResourceID("kv", "llm"));
    }
}
