package io.kvindexer.indexer;

import io.kvindexer.indexer.http.AccessLogSettings;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** Dynamo's access-log flags, mixed into {@link IndexerCli}. */
public final class AccessLogOptions {

    /** RFC 9110's token: the characters a header name may have. */
    private static final String HEADER_NAME = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";

    @Option(
            names = "--access-log",
            paramLabel = "FILE",
            description = "append one JSON record per request to FILE: ts, trace_id, method, path, model, status,"
                    + " duration_ms (POST /reopen_logs opens it again after a rotation; default: none)")
    Path file;

    @Option(
            names = "--trace-id-header",
            paramLabel = "NAME",
            description = "request header copied into each access-log record's trace_id (default: ${DEFAULT-VALUE})")
    String traceIdHeader = AccessLogSettings.DEFAULT_TRACE_ID_HEADER;

    @Option(
            names = "--access-log-local-time",
            description = "access-log timestamps in local time instead of UTC (with --access-log)")
    boolean localTime;

    AccessLogSettings settings() throws ConfigException {
        if (!traceIdHeader.matches(HEADER_NAME)) {
            throw new ConfigException(
                    "invalid value for --trace-id-header: `" + traceIdHeader + "` is not an HTTP header name");
        }
        return new AccessLogSettings(file, traceIdHeader, localTime);
    }
}
