package io.kvindexer.operator.client;

import java.net.URI;

/**
 * One indexer replica as the operator calls it: its pod name (metrics label, status), its base URL, and how to
 * reach it ({@link ReplicaAccess}: scheme, token, trusted CA).
 */
public record IndexerEndpoint(String name, URI baseUrl, ReplicaAccess access) {

    public IndexerEndpoint(String name, URI baseUrl) {
        this(name, baseUrl, ReplicaAccess.PLAIN);
    }

    public static IndexerEndpoint of(String name, String host, int port) {
        return of(name, host, port, ReplicaAccess.PLAIN);
    }

    public static IndexerEndpoint of(String name, String host, int port, ReplicaAccess access) {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return new IndexerEndpoint(name, URI.create(access.scheme() + "://" + h + ":" + port), access);
    }
}
