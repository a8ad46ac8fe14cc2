package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/**
 * Observed state of a KvIndexer. {@code ready} is the printer column ("2/2"); {@code replicas} lists the pods of
 * the current size.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record KvIndexerStatus(
        Long observedGeneration,
        Integer readyReplicas,
        String ready,
        List<ReplicaStatus> replicas,
        List<Condition> conditions) {

    /** One indexer replica: its pod, its stable URL (headless Service DNS) and whether it passes /ready. */
    public record ReplicaStatus(String pod, String url, boolean ready) {
    }
}
