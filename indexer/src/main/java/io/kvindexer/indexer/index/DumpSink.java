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
}
