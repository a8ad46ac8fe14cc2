package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.WorkerKey;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The result of syncing one replica: the instances holding all their desired ranks there after the sync, the
 * owned instances still registered there although no longer desired, and the error if the sync failed (then the
 * sets hold what is known, possibly nothing).
 */
public record ReplicaOutcome(
        String replica, Set<Long> registered, Set<Long> leftovers, int made, int removed, String error) {

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
        return new ReplicaOutcome(
                replica,
                registered,
                leftovers,
                applied.made(),
                applied.removed(),
                applied.errors().isEmpty() ? null : String.join("; ", applied.errors()));
    }
}
