package io.kvindexer.operator.crd.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/**
 * Observed state of a KvWorker: the Ready engine pods ({@code matchedPods}), how many are registered with every
 * reachable replica ({@code registeredPods}), and per pod where it is registered.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record KvWorkerStatus(
        @JsonPropertyDescription("The metadata.generation of the spec this status was written for.")
        Long observedGeneration,

        @JsonPropertyDescription("Ready engine pods the selector matches, and those kept registered while their"
                + " readiness flaps (unregisterAfterSeconds); not those an earlier KvWorker registers (the PODS"
                + " column).")
        Integer matchedPods,

        @JsonPropertyDescription(
                "Engine pods registered, every rank, with every Ready replica (the REGISTERED" + " column).")
        Integer registeredPods,

        @JsonPropertyDescription("Per engine pod, where it is registered.")
        List<PodRegistration> pods,

        @JsonPropertyDescription(
                "Ready (every matched pod registered with every Ready replica), Progressing (pods still to register)"
                        + " and Degraded (a replica or pod"
                        + " failed, a replica hears nothing from a rank, or its index is not exact: reason NotExact), each"
                        + " with the reason and a message; IndexerNotFound while spec.indexerRef names no KvIndexer.")
        List<Condition> conditions) {

    /** The same status with other conditions (what a reconcile that threw changes). */
    public KvWorkerStatus withConditions(List<Condition> newConditions) {
        return new KvWorkerStatus(observedGeneration, matchedPods, registeredPods, pods, newConditions);
    }

    /**
     * One engine pod. {@code instanceId} is an unsigned decimal; {@code endpoint} / {@code replayEndpoint} are rank
     * 0's (rank r adds r to the port); {@code registeredOn} names the indexer replicas (pods) holding all its ranks (one not
     * Ready, not synced, stays named while it may still hold them);
     * {@code uid} is the pod's {@code metadata.uid}, which tells a pod deleted and created again under the same name
     * and IP (a StatefulSet's) from the one registered. Optional: a status written before it was kept has none, and
     * such an entry is registered anew once on every replica (it may be an earlier pod's registration).
     * {@code reregisterOn} names the replicas where the registration of an earlier pod under this name (or of the
     * previous replay endpoint) may still stand, because unregistering it there failed or the replica could not be
     * reached: it is made anew there on every retry until it is done (absent when nothing is pending).
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @JsonIgnoreProperties(ignoreUnknown = true)
    public record PodRegistration(
            @JsonPropertyDescription("The engine pod.") String pod,

            @JsonPropertyDescription("Its instance id (unsigned 64-bit decimal).")
            String instanceId,

            @JsonPropertyDescription("ZMQ PUB endpoint of rank 0 (rank r adds r to the port).")
            String endpoint,

            @JsonPropertyDescription("ZMQ ROUTER (replay) endpoint of rank 0, when spec.replayPort is set.")
            String replayEndpoint,

            @JsonPropertyDescription("The indexer replica pods holding all its ranks.")
            List<String> registeredOn,

            @JsonPropertyDescription("The pod's metadata.uid when it was registered.")
            String uid,

            @JsonPropertyDescription("Replicas where an earlier registration under this name may still stand: made"
                    + " anew there on every retry until it is done.")
            @JsonInclude(JsonInclude.Include.NON_EMPTY)
            List<String> reregisterOn) {

        /** An entry that does not know the pod's uid. */
        public PodRegistration(
                String pod, String instanceId, String endpoint, String replayEndpoint, List<String> registeredOn) {
            this(pod, instanceId, endpoint, replayEndpoint, registeredOn, null, null);
        }

        /** An entry with nothing to make anew. */
        public PodRegistration(
                String pod,
                String instanceId,
                String endpoint,
                String replayEndpoint,
                List<String> registeredOn,
                String uid) {
            this(pod, instanceId, endpoint, replayEndpoint, registeredOn, uid, null);
        }

        /**
         * Whether {@code podUid} may be the pod this entry registered: false only when both uids are known and
         * differ (the pod was deleted and another created under its name).
         */
        public boolean samePod(String podUid) {
            return uid == null || podUid == null || uid.equals(podUid);
        }

        /** The replicas where the registration is still to be made anew (never null). */
        public List<String> pendingOn() {
            return reregisterOn == null ? List.of() : reregisterOn;
        }
    }
}
