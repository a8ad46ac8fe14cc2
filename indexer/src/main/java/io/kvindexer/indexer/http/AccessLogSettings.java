package io.kvindexer.indexer.http;

import java.nio.file.Path;

/**
 * Dynamo's access-log flags: {@code --access-log FILE} (one JSON record per request), {@code --trace-id-header}
 * (copied into each record's {@code trace_id}) and {@code --access-log-local-time}.
 *
 * @param file          the access log; null: none
 * @param traceIdHeader the request header whose value is the record's {@code trace_id}
 * @param localTime     timestamps in the local time zone with its offset, instead of UTC
 */
public record AccessLogSettings(Path file, String traceIdHeader, boolean localTime) {

    public static final String DEFAULT_TRACE_ID_HEADER = "x-trace-id";

    public static final AccessLogSettings NONE = new AccessLogSettings(null, DEFAULT_TRACE_ID_HEADER, false);

    public boolean enabled() {
        return file != null;
    }
}
