package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.ReplicaAccess;
import io.kvindexer.operator.reconcile.IndexerReplica;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * How the replicas of each KvIndexer were last reached (port, scheme, token, CA), by {@code namespace/name}: once a
 * KvIndexer is deleted its spec and Secrets are gone, yet its replica pods may still run (their garbage collection
 * takes a while, or the KvIndexer was deleted with {@code --cascade=orphan}) and hold this operator's registrations.
 * One entry per KvIndexer name; in memory only: after an operator restart a deleted KvIndexer's replicas can no
 * longer be reached, and are taken to hold nothing.
 */
final class IndexerAddresses {
    /**
     * One KvIndexer's replicas: their port and how to call each (by pod: they may differ while a change of
     * spec.security rolls). A replica not called before is called as the last one that was.
     */
    record Address(int port, Map<String, ReplicaAccess> byPod, ReplicaAccess last) {
        ReplicaAccess access(IndexerReplica replica) {
            return byPod.getOrDefault(replica.pod(), last);
        }
    }

    private final Map<String, Address> byIndexer = new ConcurrentHashMap<>();

    /**
     * Remembers how the replicas in {@code accesses} were reached, beside those remembered before; {@code spec}
     * (how the spec says to reach them) only when no replica was reached yet.
     */
    Address remember(
            String namespace,
            String name,
            int port,
            Map<String, ReplicaAccess> accesses,
            Supplier<ReplicaAccess> spec) {
        return byIndexer.compute(namespace + "/" + name, (k, before) -> {
            Map<String, ReplicaAccess> byPod = new HashMap<>();
            if (before != null && before.port() == port) {
                byPod.putAll(before.byPod());
            }
            byPod.putAll(accesses);
            ReplicaAccess last = !accesses.isEmpty()
                    ? accesses.values().iterator().next()
                    : before != null ? before.last() : spec.get();
            return new Address(port, Map.copyOf(byPod), last);
        });
    }

    /**
     * Forgets the KvIndexers not in {@code indexers} (gone, and no replica pod left that runs for them) and, of the
     * others, the replicas whose pod ({@code namespace/pod}) is not in {@code pods}.
     */
    void retain(Set<String> indexers, Set<String> pods) {
        byIndexer.keySet().retainAll(indexers);
        byIndexer.replaceAll((key, a) -> {
            String ns = key.substring(0, key.indexOf('/') + 1);
            Map<String, ReplicaAccess> byPod = new HashMap<>(a.byPod());
            byPod.keySet().removeIf(pod -> !pods.contains(ns + pod));
            return byPod.size() == a.byPod().size() ? a : new Address(a.port(), Map.copyOf(byPod), a.last());
        });
    }

    /** KvIndexers and replicas remembered. */
    int size() {
        return byIndexer.size()
                + byIndexer.values().stream().mapToInt(a -> a.byPod().size()).sum();
    }

    /** The last address of {@code namespace/name}, or null when it was never reached. */
    Address of(String namespace, String name) {
        return byIndexer.get(namespace + "/" + name);
    }
}
