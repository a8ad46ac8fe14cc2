package io.kvindexer.operator.client;

import java.util.Map;

/** One entry of an indexer's GET /workers: an instance and its endpoint per dp rank. */
public record RegisteredWorker(
        long instanceId,
        String modelName,
        String tenantId,
        int blockSize,
        String status,
        Map<Integer, String> endpoints) {}
