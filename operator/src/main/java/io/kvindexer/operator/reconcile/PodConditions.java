package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.api.model.Pod;

/** Reads a Pod's state the way the kubelet reports it. */
public final class PodConditions {
    private PodConditions() {}

    /** Ready condition True, an IP assigned, and not being deleted. */
    public static boolean isReady(Pod pod) {
        return isRunning(pod)
                && pod.getStatus().getConditions() != null
                && pod.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    /** An IP assigned and not being deleted (the container may still be starting or recovering). */
    public static boolean isRunning(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() == null
                && pod.getStatus() != null
                && pod.getStatus().getPodIP() != null
                && !pod.getStatus().getPodIP().isBlank()
                && !"Succeeded".equals(pod.getStatus().getPhase())
                && !"Failed".equals(pod.getStatus().getPhase());
    }
}
