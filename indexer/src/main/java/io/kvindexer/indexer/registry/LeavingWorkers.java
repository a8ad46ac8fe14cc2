package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.DumpSink;
import io.kvindexer.indexer.index.StoreTimes;
import java.util.Set;

/**
 * The workers whose blocks a state cut leaves out. Those being unregistered when it was read: their registrations
 * are gone, but their blocks are still in the index until their listeners have closed (a stream stuck past its stop
 * may take long, or never end), and a restore must never hold blocks no registration vouches for, which no listener
 * would ever remove. And the {@code degraded} ones: their blocks are only part of what their engines hold, and the
 * cut carries their registrations without a watermark, so that a restored replica joins their engines afresh
 * rather than taking the part for the whole.
 *
 * @param instances whole instances being unregistered (every dp rank, as their removal takes)
 * @param ranks     single dp ranks being unregistered, their instance staying, and degraded ranks
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
