package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.ListenerExactness;
import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.client.WorkerKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What each replica held after the operator's last sync with it, per KvWorker: so that a change of one engine pod
 * costs the calls that change needs, not a {@code GET /workers} of the whole fleet on every replica. A replica is
 * read in full again when nothing is known of it, when its incarnation changed (another pod, address or container
 * restart: it may have started over), when the last read is older than {@code maxAge} (the resync period: heals
 * whatever changed behind the operator's back), and after any failed call (forgotten at once).
 */
final class KnownRegistrations {
    /** One registered rank as the replica holds it. */
    record Held(String modelName, String tenantId, int blockSize, String endpoint) {}

    /**
     * A replica's registrations (all of them, not only this KvWorker's) as of the last sync, and how exact its index
     * is per rank as of the last full read (absent: not reported, or registered since).
     */
    record Snapshot(
            String incarnation,
            Instant readAt,
            Map<WorkerKey, Held> ranks,
            Map<WorkerKey, ListenerExactness> exactness) {

        /** The same registrations in the shape {@code GET /workers} gives them. */
        List<RegisteredWorker> asWorkers() {
            Map<Long, Map<Integer, String>> endpoints = new HashMap<>();
            Map<Long, Held> keyOf = new HashMap<>();
            ranks.forEach((k, h) -> {
                endpoints.computeIfAbsent(k.instanceId(), i -> new TreeMap<>()).put(k.dpRank(), h.endpoint());
                keyOf.put(k.instanceId(), h);
            });
            List<RegisteredWorker> out = new ArrayList<>(endpoints.size());
            endpoints.forEach((id, e) -> out.add(new RegisteredWorker(
                    id,
                    keyOf.get(id).modelName(),
                    keyOf.get(id).tenantId(),
                    keyOf.get(id).blockSize(),
                    "known",
                    Map.copyOf(e))));
            return out;
        }

        /** What the replica holds after {@code plan} was applied in full (no call failed). */
        Snapshot after(RegistrationPlan plan, String modelName, String tenantId, int blockSize) {
            Map<WorkerKey, Held> next = new HashMap<>(ranks);
            Map<WorkerKey, ListenerExactness> known = new HashMap<>(exactness);
            plan.toUnregister().forEach(u -> {
                next.remove(u.key());
                known.remove(u.key());
            });
            plan.toRegister().forEach(r -> next.put(r.key(), new Held(modelName, tenantId, blockSize, r.endpoint())));
            return new Snapshot(incarnation, readAt, next, known);
        }

        static Snapshot read(String incarnation, Instant readAt, Collection<RegisteredWorker> workers) {
            Map<WorkerKey, Held> ranks = new HashMap<>();
            Map<WorkerKey, ListenerExactness> exactness = new HashMap<>();
            for (RegisteredWorker w : workers) {
                w.endpoints()
                        .forEach((rank, endpoint) -> ranks.put(
                                new WorkerKey(w.instanceId(), rank),
                                new Held(w.modelName(), w.tenantId(), w.blockSize(), endpoint)));
                w.exactness().forEach((rank, x) -> exactness.put(new WorkerKey(w.instanceId(), rank), x));
            }
            return new Snapshot(incarnation, readAt, ranks, exactness);
        }
    }

    private final Duration maxAge;
    private final Map<String, Snapshot> byReplica = new ConcurrentHashMap<>();

    /** @param maxAge how long a full read is trusted; zero: every sync reads in full */
    KnownRegistrations(Duration maxAge) {
        this.maxAge = maxAge;
    }

    /** The key of one KvWorker's view of one replica. */
    static String slot(String worker, String replicaPod) {
        return worker + "|" + replicaPod;
    }

    /** The snapshot to sync against, or null when the replica must be read in full. */
    Snapshot usable(String slot, String incarnation, Instant now) {
        Snapshot s = byReplica.get(slot);
        if (s == null
                || !s.incarnation().equals(incarnation)
                || !now.isBefore(s.readAt().plus(maxAge))) {
            return null;
        }
        return s;
    }

    void put(String slot, Snapshot snapshot) {
        byReplica.put(slot, snapshot);
    }

    void forget(String slot) {
        byReplica.remove(slot);
    }

    /** Drops what is known for every KvWorker ({@code namespace/name}) not in {@code workers}. */
    void retainWorkers(Set<String> workers) {
        byReplica.keySet().removeIf(k -> !workers.contains(k.substring(0, k.indexOf('|'))));
    }

    int size() {
        return byReplica.size();
    }

    /** Drops what is known of {@code worker}'s replicas other than {@code replicaPods} (all when empty). */
    void retain(String worker, Set<String> replicaPods) {
        String prefix = worker + "|";
        byReplica.keySet().removeIf(k -> k.startsWith(prefix) && !replicaPods.contains(k.substring(prefix.length())));
    }
}
