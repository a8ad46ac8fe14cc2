package io.kvindexer.indexer.model;

/**
 * The owner of cached blocks: one engine instance and one of its data-parallel ranks
 * (Dynamo's WorkerWithDpRank). {@code instanceId} is a u64 held as a raw 64-bit pattern.
 */
public record WorkerKey(long instanceId, int dpRank) {

    @Override
    public String toString() {
        return Long.toUnsignedString(instanceId) + ":" + Integer.toUnsignedString(dpRank);
    }
}
