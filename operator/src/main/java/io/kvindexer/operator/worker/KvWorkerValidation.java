package io.kvindexer.operator.worker;

import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;

/** The reconciler's guard for what the schema also rejects; a message naming the field, or null. */
public final class KvWorkerValidation {
    private KvWorkerValidation() {}

    public static String validate(KvWorkerSpec spec) {
        if (spec == null) {
            return "spec is required";
        }
        if (spec.getIndexerRef() == null || spec.getIndexerRef().isBlank()) {
            return "spec.indexerRef is required";
        }
        if (spec.getModelName() == null || spec.getModelName().isBlank()) {
            return "spec.modelName is required";
        }
        if (spec.getTenantId() == null || spec.getTenantId().isBlank()) {
            return "spec.tenantId must not be empty";
        }
        if (spec.getBlockSize() == null || spec.getBlockSize() < 1) {
            return "spec.blockSize must be at least 1, got " + spec.getBlockSize();
        }
        if (spec.getDataParallelSize() == null || spec.getDataParallelSize() < 1) {
            return "spec.dataParallelSize must be at least 1, got " + spec.getDataParallelSize();
        }
        String ports = portRange("spec.zmqPort", spec.getZmqPort(), spec.getDataParallelSize());
        if (ports != null) {
            return ports;
        }
        if (spec.getReplayPort() != null) {
            ports = portRange("spec.replayPort", spec.getReplayPort(), spec.getDataParallelSize());
            if (ports != null) {
                return ports;
            }
        }
        return LabelSelectors.validate(spec.getSelector());
    }

    private static String portRange(String field, Integer port, int ranks) {
        if (port == null || port < 1 || port > 65535) {
            return field + " must be between 1 and 65535, got " + port;
        }
        if (port + ranks - 1 > 65535) {
            return field + " + dataParallelSize - 1 = " + (port + ranks - 1) + " exceeds 65535";
        }
        return null;
    }
}
