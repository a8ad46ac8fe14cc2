package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;

/**
 * Receives an index's memberships one by one, without allocating per block: the device tier first, then
 * host-pinned, disk and external; within a tier a parent always precedes its children.
 */
@FunctionalInterface
public interface DumpSink {

    void block(
            WorkerKey worker,
            StorageTier tier,
            boolean hasParent,
            long parentBlockHash,
            long blockHash,
            long localHash);

    /**
     * Runs between two chunks of the walk, when it holds no lock ({@link PrefixIndex#dump}): a sink that must wait,
     * for a slow reader say, waits here, never inside {@link #block}, where the index's writers would wait with it.
     */
    default void betweenChunks() {}
}
