package io.kvindexer.indexer.http;

import io.kvindexer.indexer.common.BearerTokens;
import io.kvindexer.indexer.common.ServiceLimits;

/**
 * What the routes need from the service's configuration; the root package's {@code IndexerConfig} implements it,
 * so the HTTP layer does not depend on the layer that wires it.
 */
public interface HttpSettings {

    /** The HTTP bind address ({@code --host}): where this replica answers. */
    String host();

    /** Caps on query size, registrations and peers, and the request read timeout. */
    ServiceLimits limits();

    /** Bearer token required on mutating endpoints and /dump; null = open. */
    String authToken();

    /**
     * The tokens accepted on those endpoints: the rotating ones of {@code --auth-token-file}, else the fixed
     * {@link #authToken()}; null = open.
     */
    BearerTokens bearerTokens();

    /** Body limit of /query and /query_by_hash. */
    long maxQueryBodyBytes();

    /** Body limit of every other POST. */
    long maxBodyBytes();

    /** Mount /test/pause_listener and /test/resume_listener (DYN_KV_INDEXER_TEST_ENDPOINTS). */
    boolean testEndpoints();
}
