package io.kvindexer.operator.e2e;

/**
 * JUnit tags of end-to-end tests that need indexer features built on other branches; the operator module's
 * surefire configuration leaves them out until those branches are merged (then the exclusion goes). Each is run
 * on purpose with {@code -Dkvindexer.e2e.excludedGroups=} (empty).
 */
final class Tags {
    /** The indexer's {@code --peers-dns <name>:<port>} startup discovery (the "indexer-ops" branch). */
    static final String NEEDS_PEERS_DNS = "needs-peers-dns";
    /** The indexer's listener connecting to IPv6 engine endpoints (the ingest issue's branch). */
    static final String NEEDS_INDEXER_IPV6 = "needs-indexer-ipv6";

    private Tags() {
    }
}
