package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/**
 * Observed state of a KvWorker: the Ready engine pods ({@code matchedPods}), how many are registered with every
 * reachable replica ({@code registeredPods}), and per pod where it is registered.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record KvWorkerStatus(
        Long observedGeneration,
        Integer matchedPods,
        Integer registeredPods,
        List<PodRegistration> pods,
        List<Condition> conditions) {

    /** The same status with other conditions (what a reconcile that threw changes). */
    public KvWorkerStatus withConditions(List<Condition> newConditions) {
        return new KvWorkerStatus(observedGeneration, matchedPods, registeredPods, pods, newConditions);
    }

    /**
     * One engine pod. {@code instanceId} is an unsigned decimal; {@code endpoint} / {@code replayEndpoint} are rank
     * 0's (rank r adds r to the port); {@code registeredOn} names the indexer replicas (pods) holding all its ranks.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record PodRegistration(
            String pod, String instanceId, String endpoint, String replayEndpoint, List<String> registeredOn) {}
}
