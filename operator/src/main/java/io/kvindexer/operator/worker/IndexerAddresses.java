package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.ReplicaAccess;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How the replicas of each KvIndexer were last reached (port, scheme, token, CA), by {@code namespace/name}: once a
 * KvIndexer is deleted its spec and Secrets are gone, yet its replica pods may still run (their garbage collection
 * takes a while, or the KvIndexer was deleted with {@code --cascade=orphan}) and hold this operator's registrations.
 * One entry per KvIndexer name; in memory only: after an operator restart a deleted KvIndexer's replicas can no
 * longer be reached, and are taken to hold nothing.
 */
final class IndexerAddresses {
    /** One KvIndexer's replicas: their port and how to call them. */
    record Address(int port, ReplicaAccess access) {}

    private final Map<String, Address> byIndexer = new ConcurrentHashMap<>();

    void remember(String namespace, String name, int port, ReplicaAccess access) {
        byIndexer.put(namespace + "/" + name, new Address(port, access));
    }

    /** The last address of {@code namespace/name}, or null when it was never reached. */
    Address of(String namespace, String name) {
        return byIndexer.get(namespace + "/" + name);
    }
}
