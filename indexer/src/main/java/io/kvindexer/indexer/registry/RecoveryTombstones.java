package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code /unregister} requests that arrived while startup recovery ran, in their forms (one rank or the whole
 * instance, under a model and tenant or under a model): when recovery installs, they win over what it
 * brought, whichever came first (issue: an unregister during recovery must not leave recovered blocks behind).
 */
final class RecoveryTombstones {

    /** One unregister; {@code tenant} and {@code dpRank} null when the request named none (any tenant, every rank). */
    private record Tombstone(long instanceId, String model, String tenant, Integer dpRank) {

        boolean covers(long id, String m, String t, int rank) {
            return instanceId == id
                    && model.equals(m)
                    && (tenant == null || tenant.equals(t))
                    && (dpRank == null || dpRank == rank);
        }
    }

    private final List<Tombstone> tombstones = new ArrayList<>();

    void add(long instanceId, String model, String tenant, Integer dpRank) {
        tombstones.add(new Tombstone(instanceId, model, tenant, dpRank));
    }

    /** Whether an unregister named a worker of {@code (model, tenant)}. */
    boolean names(String model, String tenant) {
        return tombstones.stream()
                .anyMatch(t -> t.model.equals(model) && (t.tenant == null || t.tenant.equals(tenant)));
    }

    boolean covers(long instanceId, String model, String tenant, int dpRank) {
        return tombstones.stream().anyMatch(t -> t.covers(instanceId, model, tenant, dpRank));
    }

    /**
     * Removes what the unregisters name from the indexes; ordered after the recovered content (same writer thread).
     */
    void removeFrom(Indexers indexers) {
        for (Tombstone t : tombstones) {
            for (ModelIndex ix : indexers.all()) {
                if (!ix.modelName().equals(t.model())
                        || (t.tenant() != null && !ix.tenantId().equals(t.tenant()))) {
                    continue;
                }
                if (t.dpRank() != null) {
                    ix.removeWorker(new WorkerKey(t.instanceId(), t.dpRank()));
                } else {
                    ix.removeInstance(t.instanceId());
                }
            }
        }
    }
}
