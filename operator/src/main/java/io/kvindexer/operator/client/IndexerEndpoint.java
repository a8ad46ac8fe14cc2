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

    /**
     * {@code <namespace>/<pod>}: the replica among those of every namespace (KvIndexers of one name in two
     * namespaces have pods of one name); the pod name alone when the access names no namespace.
     */
    public String qualifiedName() {
        String ns = access.namespace();
        return ns.isEmpty() ? name : ns + "/" + name;
    }

    public static IndexerEndpoint of(String name, String host, int port) {
        return of(name, host, port, ReplicaAccess.PLAIN);
    }

    public static IndexerEndpoint of(String name, String host, int port, ReplicaAccess access) {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return new IndexerEndpoint(name, URI.create(access.scheme() + "://" + h + ":" + port), access);
    }
}
