package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.MetricLabel;

/**
 * What applying one event did; the names are the {@code status} label values of the events-applied metric
 * (Dynamo's {@code dynamo_kvrouter_kv_cache_events_applied}).
 */
public enum ApplyStatus implements MetricLabel {
    OK,
    /** a device-tier store whose parent this worker does not hold on the device tier: nothing stored */
    PARENT_BLOCK_NOT_FOUND,
    /** a remove of a block this worker does not hold (counted, never an error) */
    BLOCK_NOT_FOUND,
    /** a store that changed nothing: the worker already held every block (idempotent) */
    DUPLICATE_STORE,
    /** the event's block size differs from the index's: nothing (more) stored from it */
    BLOCK_SIZE_MISMATCH,
    /** a malformed chain: repeated hashes, a block equal to its parent, too few tokens */
    INVALID_BLOCK,
    /** a hash-only (shared-storage) store naming blocks no engine store made known here: those are not stored */
    UNKNOWN_STORAGE_BLOCK
}
