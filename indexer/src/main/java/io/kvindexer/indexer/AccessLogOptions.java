package io.kvindexer.indexer;

import io.kvindexer.indexer.http.AccessLogSettings;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Set;
import picocli.CommandLine.Option;

/** Dynamo's access-log flags, mixed into {@link IndexerCli}. */
public final class AccessLogOptions {

    /** RFC 9110's token: the characters a header name may have. */
    private static final String HEADER_NAME = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]+";

    private static final Set<String> CREDENTIAL_HEADERS = Set.of("authorization", "proxy-authorization", "cookie");

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
        if (CREDENTIAL_HEADERS.contains(traceIdHeader.toLowerCase(Locale.ROOT))) {
            // its value would be the bearer token (or a session), written into every record of a file anyone may read
            throw new ConfigException("invalid value for --trace-id-header: `" + traceIdHeader
                    + "` carries credentials, which the access log never records");
        }
        return new AccessLogSettings(file, traceIdHeader, localTime);
    }
}
