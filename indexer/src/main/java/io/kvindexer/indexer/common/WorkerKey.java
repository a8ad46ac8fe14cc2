package io.kvindexer.indexer.common;

import java.util.Comparator;

/**
 * The owner of cached blocks: one engine instance and one of its data-parallel ranks
 * (Dynamo's WorkerWithDpRank). {@code instanceId} is a u64 held as a raw 64-bit pattern.
 */
public record WorkerKey(long instanceId, int dpRank) {

    /** The order answers list workers in: instance id, then dp rank, both unsigned. */
    public static final Comparator<WorkerKey> ORDER = (a, b) -> {
        // by hand, not Comparator.comparing: that boxes both keys of every comparison (answers sort on the query path)
        int byInstance = Long.compareUnsigned(a.instanceId, b.instanceId);
        return byInstance != 0 ? byInstance : Integer.compareUnsigned(a.dpRank, b.dpRank);
    };

    @Override
    public String toString() {
        return Long.toUnsignedString(instanceId) + ":" + Integer.toUnsignedString(dpRank);
    }
}
