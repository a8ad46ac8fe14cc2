package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.ingest.Exactness;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Instance id → its listeners' {@link Exactness}, replaced whenever the instance's ranks change (under the
 * registry's lock) and read without a lock: a query asks it once per instance it names, so its cost is a map
 * lookup and one volatile read per rank, never a pass over the listeners. It also routes an index write that failed
 * with no listener to tell ({@link #writeFailed}) to the listener of that worker, now or when it registers.
 */
final class ExactnessBoard {

    /** An instance's listeners: all of them for the queries, and by registered rank for {@link #writeFailed}. */
    private record Listeners(Exactness[] all, Map<Integer, Exactness> byRank) {}

    private final Map<Long, Listeners> byInstance = new ConcurrentHashMap<>();
    /**
     * Failed writes of workers no listener was registered for (recovery's adopt runs before the saved registrations
     * are restored, a reattach before its listener starts): the reason, taken by the next registration of that worker
     * rank. At most one per worker rank.
     */
    private final Map<WorkerKey, String> awaiting = new ConcurrentHashMap<>();

    void put(long instanceId, Collection<Rank> ranks) {
        Map<Integer, Exactness> listeners = new HashMap<>();
        ranks.forEach(r -> listeners.put(r.spec.dpRank(), r.exactness));
        byInstance.put(
                instanceId,
                new Listeners(ranks.stream().map(r -> r.exactness).toArray(Exactness[]::new), Map.copyOf(listeners)));
        // after the listeners are visible: a failure that did not find them left its reason here
        listeners.forEach((rank, x) -> {
            String why = awaiting.remove(new WorkerKey(instanceId, rank));
            if (why != null) {
                x.blocksDropped(why, rank);
            }
        });
    }

    void remove(long instanceId) {
        byInstance.remove(instanceId);
    }

    /**
     * An index write of {@code worker} failed and its blocks were dropped: its listener is degraded for that rank. A
     * rank with no listener of its own (its events come on another rank's stream, with their
     * {@code data_parallel_rank}) degrades every listener of the instance, and the reason also waits for a
     * registration of that rank, like the failure of a worker nobody listens to yet. On a writer thread, no lock.
     */
    void writeFailed(WorkerKey worker, String why) {
        awaiting.put(worker, why); // first: a registration that lands meanwhile takes it in put
        Listeners registered = byInstance.get(worker.instanceId());
        Map<Integer, Exactness> listeners = registered == null ? Map.of() : registered.byRank();
        Exactness own = listeners.get(worker.dpRank());
        if (own != null) {
            if (awaiting.remove(worker, why)) { // else put took it
                own.blocksDropped(why, worker.dpRank());
            }
        } else {
            listeners.values().forEach(x -> x.blocksDropped(why, worker.dpRank()));
        }
    }

    /** Every listener of the instance is exact now; false when it has none. */
    boolean exact(long instanceId) {
        Listeners listeners = byInstance.get(instanceId);
        if (listeners == null) {
            return false;
        }
        for (Exactness x : listeners.all()) {
            if (!x.exactNow()) {
                return false;
            }
        }
        return true;
    }
}
