package io.kvindexer.indexer.index;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** Events applied, by event type and {@link ApplyStatus}; lock-free to bump and to read at scrape time. */
final class ApplyCounters {

    enum EventType {
        STORED("stored"),
        REMOVED("removed"),
        CLEARED("cleared");

        final String label;

        EventType(String label) {
            this.label = label;
        }
    }

    private static final ApplyStatus[] STATUSES = ApplyStatus.values();

    private final LongAdder[][] counts = new LongAdder[EventType.values().length][STATUSES.length];

    ApplyCounters() {
        for (LongAdder[] row : counts) {
            for (int s = 0; s < row.length; s++) {
                row[s] = new LongAdder();
            }
        }
    }

    void count(EventType type, ApplyStatus status) {
        counts[type.ordinal()][status.ordinal()].increment();
    }

    long get(EventType type, ApplyStatus status) {
        return counts[type.ordinal()][status.ordinal()].sum();
    }

    /** type label → status label → count, every combination present (zeros included) in a stable order. */
    Map<String, Map<String, Long>> snapshot() {
        Map<String, Map<String, Long>> out = new LinkedHashMap<>();
        for (EventType type : EventType.values()) {
            Map<String, Long> row = new LinkedHashMap<>();
            for (ApplyStatus status : STATUSES) {
                row.put(status.label(), get(type, status));
            }
            out.put(type.label, Collections.unmodifiableMap(row));
        }
        return Collections.unmodifiableMap(out);
    }
}
