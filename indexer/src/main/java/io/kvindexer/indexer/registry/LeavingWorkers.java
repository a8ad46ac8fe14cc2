package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.DumpSink;
import io.kvindexer.indexer.index.StoreTimes;
import java.util.Set;

/**
 * The workers being unregistered when a state cut was read: their registrations are gone, but their blocks are still
 * in the index until their listeners have closed (a stream stuck past its stop may take long, or never end). A cut
 * leaves their blocks out, so that a restore never holds blocks no registration vouches for, which no listener would
 * ever remove.
 *
 * @param instances whole instances being unregistered (every dp rank, as their removal takes)
 * @param ranks     single dp ranks being unregistered, their instance staying
 */
public record LeavingWorkers(Set<Long> instances, Set<WorkerKey> ranks) {

    public static final LeavingWorkers NONE = new LeavingWorkers(Set.of(), Set.of());

    public LeavingWorkers {
        instances = Set.copyOf(instances);
        ranks = Set.copyOf(ranks);
    }

    public boolean covers(WorkerKey worker) {
        return instances.contains(worker.instanceId()) || ranks.contains(worker);
    }

    /** {@code sink} without the memberships of these workers (itself when there are none: the walk's hot path). */
    public DumpSink without(DumpSink sink) {
        if (isEmpty()) {
            return sink;
        }
        return (worker, tier, hasParent, parent, block, local) -> {
            if (!covers(worker)) {
                sink.block(worker, tier, hasParent, parent, block, local);
            }
        };
    }

    /** {@code sink} without the last-store times of these workers. */
    public StoreTimes.Sink without(StoreTimes.Sink sink) {
        if (isEmpty()) {
            return sink;
        }
        return (worker, tier, hashes, millis) -> {
            if (!covers(worker)) {
                sink.times(worker, tier, hashes, millis);
            }
        };
    }

    private boolean isEmpty() {
        return instances.isEmpty() && ranks.isEmpty();
    }
}
