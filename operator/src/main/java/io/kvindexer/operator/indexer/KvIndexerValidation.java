package io.kvindexer.operator.indexer;

import io.kvindexer.operator.crd.v1alpha1.KvIndexerSpec;

/**
 * The reconciler's own guard for what the CRD schema also rejects (objects may reach the operator without the
 * schema: older CRDs, tests, a server that does not validate). Returns a message naming the field, or null.
 */
public final class KvIndexerValidation {
    private KvIndexerValidation() {}

    public static String validate(KvIndexerSpec spec) {
        if (spec == null) {
            return "spec is required";
        }
        if (spec.getImage() == null || spec.getImage().isBlank()) {
            return "spec.image is required";
        }
        if (spec.getReplicas() == null || spec.getReplicas() < 1 || spec.getReplicas() > 64) {
            return "spec.replicas must be between 1 and 64, got " + spec.getReplicas();
        }
        if (spec.getPort() == null || spec.getPort() < 1 || spec.getPort() > 65535) {
            return "spec.port must be between 1 and 65535, got " + spec.getPort();
        }
        if (spec.getThreads() == null || spec.getThreads() < 0) {
            return "spec.threads must be 0 or more, got " + spec.getThreads();
        }
        if (spec.getMinInitialWorkers() == null || spec.getMinInitialWorkers() < 0) {
            return "spec.minInitialWorkers must be 0 or more, got " + spec.getMinInitialWorkers();
        }
        if (spec.getAutoscaling() != null) {
            var a = spec.getAutoscaling();
            if (a.minReplicas() == null || a.maxReplicas() == null || a.targetCPUUtilizationPercentage() == null) {
                return "spec.autoscaling needs minReplicas, maxReplicas and targetCPUUtilizationPercentage";
            }
            if (a.minReplicas() < 1 || a.maxReplicas() > 64 || a.minReplicas() > a.maxReplicas()) {
                return "spec.autoscaling: 1 <= minReplicas <= maxReplicas <= 64, got " + a.minReplicas() + ".."
                        + a.maxReplicas();
            }
            if (a.targetCPUUtilizationPercentage() < 1 || a.targetCPUUtilizationPercentage() > 100) {
                return "spec.autoscaling.targetCPUUtilizationPercentage must be between 1 and 100, got "
                        + a.targetCPUUtilizationPercentage();
            }
        }
        return null;
    }
}
