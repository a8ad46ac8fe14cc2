package io.kvindexer.indexer.index;

/**
 * What applying one event did; the names are the {@code status} label values of the events-applied metric
 * (Dynamo's {@code dynamo_kvrouter_kv_cache_events_applied}).
 */
public enum ApplyStatus {
    OK("ok"),
    /** a device-tier store whose parent this worker does not hold on the device tier: nothing stored */
    PARENT_BLOCK_NOT_FOUND("parent_block_not_found"),
    /** a remove of a block this worker does not hold (counted, never an error) */
    BLOCK_NOT_FOUND("block_not_found"),
    /** a store that changed nothing: the worker already held every block (idempotent) */
    DUPLICATE_STORE("duplicate_store"),
    /** the event's block size differs from the index's: nothing (more) stored from it */
    BLOCK_SIZE_MISMATCH("block_size_mismatch"),
    /** a malformed chain: repeated hashes, a block equal to its parent, too few tokens */
    INVALID_BLOCK("invalid_block"),
    /** a hash-only (shared-storage) store naming blocks no engine store made known here: those are not stored */
    UNKNOWN_STORAGE_BLOCK("unknown_storage_block");

    private final String label;

    ApplyStatus(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
