package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.WorkerKey;
import java.util.List;

/**
 * Told what the writer threads have applied, so a component outside the index (package {@code expiry}: block TTL and
 * per-worker capacity) can follow each worker's memberships without the index keeping anything for it. Every call
 * about a worker runs on that worker's writer thread, after the change is applied and in the order of its changes;
 * an implementation must be quick and must not block.
 */
public interface AppliedOps {

    /**
     * A worker's ops were applied; {@code statuses[i]} is what applying {@code ops.get(i)} gave (a store that came
     * back {@link ApplyStatus#PARENT_BLOCK_NOT_FOUND} changed nothing).
     */
    void applied(ModelIndex index, WorkerKey worker, List<? extends IndexOp> ops, ApplyStatus[] statuses);

    /** One (instance, dp rank) lost every membership (unregister of one rank, publisher restart). */
    void workerRemoved(ModelIndex index, WorkerKey worker);

    /** Every dp rank of an instance lost every membership (unregister of the instance). */
    void instanceRemoved(ModelIndex index, long instanceId);

    /** The index is dropped from the service (its last worker unregistered); called on the caller's thread. */
    void indexDropped(ModelIndex index);

    /**
     * The wall-clock time of each followed block's last store, on the tiers where it matters after a restart (those
     * with a TTL), for a snapshot or a binary dump; called on the caller's thread. None by default.
     */
    default void lastStores(ModelIndex index, StoreTimes.Sink sink) {}

    /** Whether {@link #lastStores} can give any time at all (some tier has a TTL). */
    default boolean keepsStoreTimes() {
        return false;
    }

    /**
     * Recovery is about to submit a staged index's memberships to {@code index} as recovered stores: a block found in
     * {@code times} starts its time at its last store there, not at its arrival. Called on the caller's thread.
     */
    default void recoveredStores(ModelIndex index, StoreTimes times) {}

    /** The recovered stores announced with {@code times} have all been applied: the times may be forgotten. */
    default void recoveredStoresApplied(ModelIndex index, StoreTimes times) {}
}
