package io.kvindexer.indexer.expiry;

import io.kvindexer.indexer.common.MetricLabel;

/** Why the indexer removed a block the engine did not remove (the {@code reason} label of the expiry counter). */
public enum ExpiryReason implements MetricLabel {
    /** not stored again within its tier's {@code --block-ttl} */
    TTL,
    /** its worker went above {@code --max-blocks-per-worker} on that tier and it was among the oldest stored */
    CAPACITY
}
