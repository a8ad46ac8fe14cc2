package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.ingest.Exactness;
import io.kvindexer.indexer.ingest.ExactnessState;
import java.util.Collection;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Instance id → its listeners' {@link Exactness}, replaced whenever the instance's ranks change (under the
 * registry's lock) and read without a lock: a query asks it once per instance it names, so its cost is a map
 * lookup and one volatile read per rank, never a pass over the listeners.
 */
final class ExactnessBoard {

    private final Map<Long, Exactness[]> byInstance = new ConcurrentHashMap<>();

    void put(long instanceId, Collection<Rank> ranks) {
        byInstance.put(instanceId, ranks.stream().map(r -> r.exactness).toArray(Exactness[]::new));
    }

    void remove(long instanceId) {
        byInstance.remove(instanceId);
    }

    /** Every listener of the instance is exact now; false when it has none. */
    boolean exact(long instanceId) {
        Exactness[] ranks = byInstance.get(instanceId);
        if (ranks == null) {
            return false;
        }
        for (Exactness x : ranks) {
            if (!x.exactNow()) {
                return false;
            }
        }
        return true;
    }

    /** Listeners per state, every state present (read at scrape time). */
    Map<ExactnessState, Integer> counts() {
        Map<ExactnessState, Integer> counts = new EnumMap<>(ExactnessState.class);
        for (ExactnessState s : ExactnessState.values()) {
            counts.put(s, 0);
        }
        for (Exactness[] ranks : byInstance.values()) {
            for (Exactness x : ranks) {
                counts.merge(x.read().state(), 1, Integer::sum);
            }
        }
        return counts;
    }
}
