package io.kvindexer.indexer.event;

import java.util.List;
import java.util.Map;

/**
 * One msgpack payload of the engine's PUB stream: {@code [ts, events, data_parallel_rank]}.
 *
 * @param timestamp        seconds since the epoch as the engine stamped it (ignored by the index)
 * @param events           the events the index applies, in order (ignored, skipped and unknown events removed)
 * @param dataParallelRank the batch's rank, which overrides the registered one; null when absent or nil
 * @param unknownEvents    events with an unknown tag that were skipped
 * @param ignoredEvents    events dropped on purpose ({@code Ignored} tag, and every event skipped with a warning)
 * @param warnings         decoder-side warnings of this batch by kind (see {@link EventWarning}); empty when none
 */
public record KvEventBatch(
        double timestamp,
        List<KvEvent> events,
        Integer dataParallelRank,
        int unknownEvents,
        int ignoredEvents,
        Map<EventWarning, Integer> warnings) {

    public KvEventBatch {
        warnings = warnings == null ? Map.of() : warnings;
    }

    /** A batch without warnings. */
    public KvEventBatch(
            double timestamp, List<KvEvent> events, Integer dataParallelRank, int unknownEvents, int ignoredEvents) {
        this(timestamp, events, dataParallelRank, unknownEvents, ignoredEvents, Map.of());
    }
}
