package io.kvindexer.operator.reconcile;

import static io.kvindexer.operator.reconcile.SpecChecks.atLeastOne;
import static io.kvindexer.operator.reconcile.SpecChecks.between;
import static io.kvindexer.operator.reconcile.SpecChecks.first;
import static io.kvindexer.operator.reconcile.SpecChecks.indexerName;
import static io.kvindexer.operator.reconcile.SpecChecks.required;
import static io.kvindexer.operator.reconcile.SpecChecks.zeroOrMore;

import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;

/** The reconciler's guard for what the schema also rejects; a message naming the field, or null. */
public final class KvWorkerValidation {
    private KvWorkerValidation() {}

    public static String validate(KvWorkerSpec spec) {
        if (spec == null) {
            return "spec is required";
        }
        if (spec.unreadable() != null) {
            return spec.unreadable();
        }
        String tenantId = spec.getTenantId();
        String problem = first(
                required("spec.indexerRef", spec.getIndexerRef()),
                required("spec.modelName", spec.getModelName()),
                tenantId == null || tenantId.isBlank() ? "spec.tenantId must not be empty" : null,
                indexerName("spec.modelName", spec.getModelName(), KvWorkerSpec.NAME_MAX),
                indexerName("spec.tenantId", tenantId, KvWorkerSpec.NAME_MAX),
                atLeastOne("spec.blockSize", spec.getBlockSize()),
                atLeastOne("spec.dataParallelSize", spec.getDataParallelSize()),
                spec.getUnregisterAfterSeconds() == null
                        ? null
                        : zeroOrMore("spec.unregisterAfterSeconds", spec.getUnregisterAfterSeconds()));
        if (problem != null) {
            return problem;
        }
        int ranks = spec.getDataParallelSize();
        return first(
                portRange("spec.zmqPort", spec.getZmqPort(), ranks),
                spec.getReplayPort() == null ? null : portRange("spec.replayPort", spec.getReplayPort(), ranks),
                LabelSelectors.validate(spec.getSelector()));
    }

    private static String portRange(String field, Integer port, int ranks) {
        String range = between(field, port, 1, 65535);
        if (range != null) {
            return range;
        }
        if (port + ranks - 1 > 65535) {
            return field + " + dataParallelSize - 1 = " + (port + ranks - 1) + " exceeds 65535";
        }
        return null;
    }
}
