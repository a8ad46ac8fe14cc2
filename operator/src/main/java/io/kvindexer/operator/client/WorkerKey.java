package io.kvindexer.operator.client;

/**
 * One worker as the indexer knows it: an engine instance and one of its data-parallel ranks (the operator's side of
 * the indexer's {@code WorkerKey}; see docs/concepts.md). {@code instanceId} is an unsigned 64-bit pattern.
 */
public record WorkerKey(long instanceId, int dpRank) {}
