package io.kvindexer.operator.client;

import java.util.Map;

/**
 * One entry of an indexer's GET /workers: an instance, its endpoint per dp rank, and per rank how exact the index is
 * for it ({@code exactness}: empty when the indexer does not say).
 */
public record RegisteredWorker(
        long instanceId,
        String modelName,
        String tenantId,
        int blockSize,
        String status,
        Map<Integer, String> endpoints,
        Map<Integer, ListenerExactness> exactness) {

    public RegisteredWorker(
            long instanceId,
            String modelName,
            String tenantId,
            int blockSize,
            String status,
            Map<Integer, String> endpoints) {
        this(instanceId, modelName, tenantId, blockSize, status, endpoints, Map.of());
    }
}
