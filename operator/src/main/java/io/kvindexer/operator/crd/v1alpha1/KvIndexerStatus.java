package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.model.annotation.LabelSelector;
import io.fabric8.kubernetes.model.annotation.StatusReplicas;
import java.util.List;

/**
 * Observed state of a KvIndexer. {@code replicas} (replica pods that exist) and {@code selector} are what the scale
 * subresource reports to {@code kubectl scale} and a HorizontalPodAutoscaler; {@code ready} is the printer column
 * ("2/2"); {@code pods} lists the replicas of the current size. Fields a newer operator wrote are ignored, and a
 * {@code replicas} that is not a number (the list of operator versions before the scale subresource) reads as
 * unset: the next status write replaces it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record KvIndexerStatus(
        @JsonPropertyDescription("The metadata.generation of the spec this status was written for.")
        Long observedGeneration,

        @StatusReplicas
        @JsonDeserialize(using = LenientCount.class)
        @JsonPropertyDescription("Replica pods that exist (the scale subresource's status replicas).")
        Integer replicas,

        @JsonPropertyDescription("Replicas of the desired number whose pod is Ready.")
        Integer readyReplicas,

        @JsonPropertyDescription("Ready replicas of the desired number, as ready/desired (the READY column).")
        String ready,

        @LabelSelector
        @JsonPropertyDescription("Label selector of the replica pods, as a string (the scale subresource's selector).")
        String selector,

        @JsonPropertyDescription("The replicas of the desired number, in ordinal order.")
        List<ReplicaStatus> pods,

        @JsonPropertyDescription("Ready (every replica Ready), Progressing (waiting for replicas) and Degraded (a"
                + " replica's peer list, the TLS issuer, the volumes or the ServiceMonitor could not be kept as the"
                + " spec says), each with the reason and a message; a refused spec (InvalidSpec, Unreadable) or a"
                + " failed reconcile (ReconcileFailed) sets all three.")
        List<Condition> conditions) {

    /** The same status with other conditions (what a reconcile that threw changes). */
    public KvIndexerStatus withConditions(List<Condition> newConditions) {
        return new KvIndexerStatus(observedGeneration, replicas, readyReplicas, ready, selector, pods, newConditions);
    }

    /** One indexer replica: its pod, its stable URL (headless Service DNS) and whether it passes /ready. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record ReplicaStatus(
            @JsonPropertyDescription("The replica's pod, <name>-<ordinal>.")
            String pod,

            @JsonPropertyDescription("The replica's stable URL through the headless Service,"
                    + " <scheme>://<pod>.<name>-peers.<namespace>.svc:<port>.")
            String url,

            @JsonPropertyDescription("Whether the replica's pod is Ready.")
            boolean ready) {}
}
