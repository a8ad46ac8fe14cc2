package io.kvindexer.logging;

import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Fields a JSON log line takes from the thread that writes it: the indexer installs the ids of the request span the
 * line is written in ({@code trace_id}, {@code span_id}), as Dynamo's JSONL lines carry them. Read on every JSON line,
 * so the source must be cheap; nothing is installed by default.
 */
public final class LogContext {

    private static volatile Supplier<Map<String, String>> source = Map::of;

    private LogContext() {}

    /** Replaces the source; the process wires one at its start. */
    public static void install(Supplier<Map<String, String>> fields) {
        source = Objects.requireNonNull(fields, "fields");
    }

    static Map<String, String> fields() {
        return source.get();
    }
}
