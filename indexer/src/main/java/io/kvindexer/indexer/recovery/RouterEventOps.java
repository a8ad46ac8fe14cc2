package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.index.IndexOp;
import io.kvindexer.indexer.index.ModelIndex;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decoded {@code /dump} RouterEvents become the index's own operations: a recovered store carries its hashes
 * ready-made and does not need its device parent held (the peer vouched for the chain).
 */
public final class RouterEventOps {

    private RouterEventOps() {}

    public static IndexOp of(RouterEvent event) {
        return switch (event.data()) {
            case RouterEvent.Stored s ->
                IndexOp.Store.recovered(
                        event.tier(), s.hasParent(), s.parentBlockHash(), s.blockHashes(), s.localHashes());
            case RouterEvent.Removed r -> new IndexOp.Remove(event.tier(), r.blockHashes());
            case RouterEvent.Cleared c -> new IndexOp.Clear();
        };
    }

    /** Submits events to an index, grouped per worker in their order (one writer task per worker). */
    public static void submit(ModelIndex index, List<RouterEvent> events) {
        Map<WorkerKey, List<IndexOp>> byWorker = new LinkedHashMap<>();
        for (RouterEvent event : events) {
            byWorker.computeIfAbsent(new WorkerKey(event.instanceId(), event.dpRank()), w -> new ArrayList<>())
                    .add(of(event));
        }
        byWorker.forEach(index::submitOps);
    }
}
