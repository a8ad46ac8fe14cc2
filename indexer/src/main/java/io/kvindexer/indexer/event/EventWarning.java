package io.kvindexer.indexer.event;

import io.kvindexer.indexer.common.MetricLabel;

/**
 * Events that were accepted on the wire but not indexed as they came (or indexed with a fallback), by reason.
 * The labels are the {@code warning_kind} values of {@code dynamo_kvrouter_kv_cache_event_warnings}; the first
 * five are counted by the decoder, the last two by the index.
 */
public enum EventWarning implements MetricLabel {
    /** a medium outside the known table: indexed on the external tier */
    UNKNOWN_MEDIUM,
    /** a {@code locality} other than {@code LOCAL}: a copy this engine does not hold, not indexed */
    NON_LOCAL,
    /** an {@code ownership} domain (e.g. {@code kvcr}) the engine does not own: not indexed, not cleared */
    OWNERSHIP,
    /** a cache group that is not full attention (sliding window, mamba, ...), or one learned as such */
    SKIPPED_CACHE_GROUP,
    /** a store whose tokens are not exactly {@code blocks × block_size}: the blocks cannot be hashed safely */
    SPARSE_SPAN,
    /** a store of blocks the worker already held (Dynamo's name) */
    DUPLICATE_STORE,
    /** a hash-only (shared-storage) store of blocks no engine store has made known in that index */
    UNKNOWN_STORAGE_BLOCK
}
