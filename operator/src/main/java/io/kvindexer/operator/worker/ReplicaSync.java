package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.client.IndexerClientException;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.WorkerKey;
import io.kvindexer.operator.client.WorkerRegistration;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One KvWorker's registrations on one replica: know what it holds (from the last sync, {@link KnownRegistrations},
 * or its {@code GET /workers} when that is not to be trusted), plan, apply the plan (unregister first: a changed rank
 * must be free; then register), and turn what happened into a {@link ReplicaOutcome}. A change of one engine pod thus
 * costs one call per rank and replica, whatever the size of the fleet. The parts that talk to the replica are the
 * read and {@link #apply}; planning and the outcome are pure.
 */
final class ReplicaSync {
    /**
     * What applying a plan did: calls that succeeded, the ranks whose call failed (a rank whose unregistration
     * failed is not registered again), and the error texts.
     */
    record Applied(int made, int removed, Set<WorkerKey> failed, List<String> errors) {}

    private final IndexerClient client;
    private final KvWorkerSpec spec;
    private final KnownRegistrations known;
    private final String worker;
    private final Clock clock;

    /** Without memory: every sync reads the replica in full. */
    ReplicaSync(IndexerClient client, KvWorkerSpec spec) {
        this(client, spec, new KnownRegistrations(Duration.ZERO), "", Clock.systemUTC());
    }

    ReplicaSync(IndexerClient client, KvWorkerSpec spec, KnownRegistrations known, String worker, Clock clock) {
        this.client = client;
        this.spec = spec;
        this.known = known;
        this.worker = worker;
        this.clock = clock;
    }

    /** Read (or recall), plan, apply; an unreadable replica is an outcome with an error, never an exception. */
    ReplicaOutcome sync(
            IndexerEndpoint replica, DesiredRegistrations desired, Set<Long> owned, Set<Long> replayChanged) {
        return sync(replica, replica.name() + "@" + replica.baseUrl(), desired, owned, replayChanged);
    }

    /** As above, for a replica whose process is the one {@code incarnation} names. */
    ReplicaOutcome sync(
            IndexerEndpoint replica,
            String incarnation,
            DesiredRegistrations desired,
            Set<Long> owned,
            Set<Long> replayChanged) {
        String slot = KnownRegistrations.slot(worker, replica.name());
        Instant now = clock.instant();
        KnownRegistrations.Snapshot before = known.usable(slot, incarnation, now);
        if (before == null) {
            try {
                before = KnownRegistrations.Snapshot.read(incarnation, now, client.workers(replica));
            } catch (IndexerClientException e) {
                known.forget(slot);
                return ReplicaOutcome.unreachable(replica.name(), e.getMessage());
            }
        }
        RegistrationPlan plan = RegistrationPlan.of(
                desired.registrations(),
                before.asWorkers(),
                spec.getModelName(),
                spec.getTenantId(),
                spec.getBlockSize(),
                owned,
                replayChanged);
        Applied applied = apply(replica, plan);
        KnownRegistrations.Snapshot after =
                before.after(plan, spec.getModelName(), spec.getTenantId(), spec.getBlockSize());
        if (applied.errors().isEmpty()) {
            known.put(slot, after);
        } else {
            known.forget(slot); // something is not as believed: read it in full next time
        }
        return ReplicaOutcome.of(replica.name(), desired, plan, applied, after.exactness());
    }

    /**
     * Sends the plan's calls to one replica. A 404 on unregister means already gone: what we wanted. Once a call
     * finds the replica unreachable the rest are not made (failed, for the next reconcile): each would wait out the
     * timeouts in turn, holding the reconcile for minutes on a large plan.
     */
    Applied apply(IndexerEndpoint replica, RegistrationPlan plan) {
        List<String> errors = new ArrayList<>();
        Set<WorkerKey> failed = new HashSet<>();
        int made = 0;
        int removed = 0;
        int skipped = 0;
        boolean unreachable = false;
        for (RegistrationPlan.Unregistration u : plan.toUnregister()) {
            if (unreachable) {
                failed.add(u.key());
                skipped++;
                continue;
            }
            try {
                client.unregister(replica, u.instanceId(), u.dpRank(), u.modelName(), u.tenantId());
                removed++;
            } catch (IndexerClientException e) {
                if (e.status() != 404) {
                    errors.add(e.getMessage());
                    failed.add(u.key());
                    unreachable = e.unreachable();
                }
            }
        }
        for (WorkerRegistration r : plan.toRegister()) {
            if (failed.contains(r.key())) {
                continue;
            }
            if (unreachable) {
                failed.add(r.key());
                skipped++;
                continue;
            }
            try {
                client.register(replica, r, spec.getModelName(), spec.getTenantId(), spec.getBlockSize());
                made++;
            } catch (IndexerClientException e) {
                errors.add(e.getMessage());
                failed.add(r.key());
                unreachable = e.unreachable();
            }
        }
        if (skipped > 0) {
            errors.add(skipped + " more calls not made: the replica is unreachable");
        }
        return new Applied(made, removed, Set.copyOf(failed), List.copyOf(errors));
    }
}
