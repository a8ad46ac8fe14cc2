package io.kvindexer.operator.indexer;

import static io.kvindexer.operator.reconcile.SpecChecks.between;
import static io.kvindexer.operator.reconcile.SpecChecks.first;
import static io.kvindexer.operator.reconcile.SpecChecks.required;
import static io.kvindexer.operator.reconcile.SpecChecks.zeroOrMore;

import io.kvindexer.operator.crd.v1alpha1.KvIndexerSpec;

/**
 * The reconciler's own guard for what the CRD schema also rejects (objects may reach the operator without the
 * schema: older CRDs, tests, a server that does not validate). Returns a message naming the field, or null.
 */
public final class KvIndexerValidation {
    private KvIndexerValidation() {}

    /** At least one shard and at most the writer threads (0 or 1 threads: one), as the indexer requires. */
    private static String indexShards(KvIndexerSpec spec) {
        Integer threads = spec.getThreads() == null ? 1 : Math.max(1, spec.getThreads());
        return between("spec.indexShards", spec.getIndexShards(), 1, threads);
    }

    public static String validate(KvIndexerSpec spec) {
        if (spec == null) {
            return "spec is required";
        }
        String problem = first(
                required("spec.image", spec.getImage()),
                between("spec.replicas", spec.getReplicas(), 1, 64),
                between("spec.port", spec.getPort(), 1, 65535),
                zeroOrMore("spec.threads", spec.getThreads()),
                indexShards(spec),
                zeroOrMore("spec.minInitialWorkers", spec.getMinInitialWorkers()),
                spec.getBlockTtl() == null ? null : spec.getBlockTtl().problem(),
                spec.getMaxBlocksPerWorker() != null && spec.getMaxBlocksPerWorker() < 0
                        ? "spec.maxBlocksPerWorker must be 0 or more, got " + spec.getMaxBlocksPerWorker()
                        : null);
        if (problem != null) {
            return problem;
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
