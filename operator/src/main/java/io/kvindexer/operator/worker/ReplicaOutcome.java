package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.ListenerExactness;
import io.kvindexer.operator.client.WorkerKey;
import java.util.Collections;
import java.util.Comparator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The result of syncing one replica: the instances holding all their desired ranks there after the sync, the
 * owned instances still registered there although no longer desired, the error if the sync failed (then the sets
 * hold what is known, possibly nothing), and the desired ranks whose index the replica last said is not exact.
 */
public record ReplicaOutcome(
        String replica,
        Set<Long> registered,
        Set<Long> leftovers,
        int made,
        int removed,
        String error,
        Map<WorkerKey, ListenerExactness> notExact) {

    public ReplicaOutcome(
            String replica, Set<Long> registered, Set<Long> leftovers, int made, int removed, String error) {
        this(replica, registered, leftovers, made, removed, error, Map.of());
    }

    public boolean failed() {
        return error != null;
    }

    /** The replica could not be read: nothing is known about it. */
    static ReplicaOutcome unreachable(String replica, String error) {
        return new ReplicaOutcome(replica, Set.of(), Set.of(), 0, 0, error);
    }

    /**
     * Pure: what a replica holds after {@code applied} ran {@code plan}. An instance is registered when none of its
     * ranks failed; a leftover is a no-longer-desired instance whose unregistration failed.
     */
    static ReplicaOutcome of(
            String replica, DesiredRegistrations desired, RegistrationPlan plan, ReplicaSync.Applied applied) {
        return of(replica, desired, plan, applied, Map.of());
    }

    /** As above, with the exactness the replica last reported per rank: the desired ranks not exact are kept. */
    static ReplicaOutcome of(
            String replica,
            DesiredRegistrations desired,
            RegistrationPlan plan,
            ReplicaSync.Applied applied,
            Map<WorkerKey, ListenerExactness> exactness) {
        Set<WorkerKey> failed = applied.failed();
        Set<Long> registered = desired.targets().stream()
                .filter(t -> t.registrations().stream().noneMatch(r -> failed.contains(r.key())))
                .map(EngineTarget::instanceId)
                .collect(Collectors.toUnmodifiableSet());
        Set<Long> desiredIds =
                desired.targets().stream().map(EngineTarget::instanceId).collect(Collectors.toSet());
        Set<Long> leftovers = plan.toUnregister().stream()
                .filter(u -> failed.contains(u.key()))
                .map(RegistrationPlan.Unregistration::instanceId)
                .filter(id -> !desiredIds.contains(id))
                .collect(Collectors.toUnmodifiableSet());
        Map<WorkerKey, ListenerExactness> notExact =
                new TreeMap<>(Comparator.comparingLong(WorkerKey::instanceId).thenComparingInt(WorkerKey::dpRank));
        desired.registrations().forEach(r -> {
            ListenerExactness x = exactness.get(r.key());
            if (x != null && !x.exact()) {
                notExact.put(r.key(), x);
            }
        });
        return new ReplicaOutcome(
                replica,
                registered,
                leftovers,
                applied.made(),
                applied.removed(),
                applied.errors().isEmpty() ? null : String.join("; ", applied.errors()),
                Collections.unmodifiableMap(notExact));
    }
}
