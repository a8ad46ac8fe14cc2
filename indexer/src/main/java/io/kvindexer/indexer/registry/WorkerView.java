package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.ingest.ListenerSnapshot;
import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.ingest.StreamProgress;
import java.util.SortedMap;

/**
 * One entry of {@code GET /workers}.
 *
 * @param status    aggregated over the ranks: failed &gt; pending &gt; active &gt; paused
 * @param blockSize of the (model, tenant) index; 0 if it vanished concurrently
 * @param listeners by dp rank (unsigned order)
 * @param progress  by dp rank, as {@code listeners}: how far each stream has come
 * @param podName   the engine's pod as given to {@code /register}; null when unknown
 */
public record WorkerView(
        long instanceId,
        ListenerStatus status,
        String modelName,
        String tenantId,
        int blockSize,
        SortedMap<Integer, ListenerSnapshot> listeners,
        SortedMap<Integer, StreamProgress> progress,
        String podName) {

    static ListenerStatus aggregate(Iterable<ListenerSnapshot> listeners) {
        boolean pending = false;
        boolean active = false;
        for (ListenerSnapshot l : listeners) {
            switch (l.status()) {
                case FAILED -> {
                    return ListenerStatus.FAILED;
                }
                case PENDING -> pending = true;
                case ACTIVE -> active = true;
                case PAUSED -> {}
            }
        }
        return pending ? ListenerStatus.PENDING : active ? ListenerStatus.ACTIVE : ListenerStatus.PAUSED;
    }
}
