package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.WorkerKey;

/**
 * A write of {@code worker} that {@code index} failed to apply and that no listener delivered (recovery's adopt, a
 * reattach after {@code --unregister-grace}, block expiry): the worker's blocks were dropped, so whoever owns its
 * stream must stop vouching for it ({@link Indexers#onFailedWrite}).
 */
public record FailedWrite(ModelIndex index, WorkerKey worker, Throwable failure) {}
