package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.IndexerClient;
import io.kvindexer.operator.client.IndexerClientException;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.client.WorkerKey;
import io.kvindexer.operator.client.WorkerRegistration;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One KvWorker's registrations on one replica: read its {@code GET /workers}, plan, apply the plan (unregister
 * first: a changed rank must be free; then register), and turn what happened into a {@link ReplicaOutcome}. The
 * only part that talks to the replica is {@link #apply}; planning and the outcome are pure.
 */
final class ReplicaSync {
    /**
     * What applying a plan did: calls that succeeded, the ranks whose call failed (a rank whose unregistration
     * failed is not registered again), and the error texts.
     */
    record Applied(int made, int removed, Set<WorkerKey> failed, List<String> errors) {}

    private final IndexerClient client;
    private final KvWorkerSpec spec;

    ReplicaSync(IndexerClient client, KvWorkerSpec spec) {
        this.client = client;
        this.spec = spec;
    }

    /** Read, plan, apply; an unreadable replica is an outcome with an error, never an exception. */
    ReplicaOutcome sync(
            IndexerEndpoint replica, DesiredRegistrations desired, Set<Long> owned, Set<Long> replayChanged) {
        List<RegisteredWorker> actual;
        try {
            actual = client.workers(replica);
        } catch (IndexerClientException e) {
            return ReplicaOutcome.unreachable(replica.name(), e.getMessage());
        }
        RegistrationPlan plan = RegistrationPlan.of(
                desired.registrations(), actual, spec.getModelName(), spec.getTenantId(), owned, replayChanged);
        return ReplicaOutcome.of(replica.name(), desired, plan, apply(replica, plan));
    }

    /** Sends the plan's calls to one replica. A 404 on unregister means already gone: what we wanted. */
    Applied apply(IndexerEndpoint replica, RegistrationPlan plan) {
        List<String> errors = new ArrayList<>();
        Set<WorkerKey> failed = new HashSet<>();
        int made = 0;
        int removed = 0;
        for (RegistrationPlan.Unregistration u : plan.toUnregister()) {
            try {
                client.unregister(replica, u.instanceId(), u.dpRank(), u.modelName(), u.tenantId());
                removed++;
            } catch (IndexerClientException e) {
                if (e.status() != 404) {
                    errors.add(e.getMessage());
                    failed.add(u.key());
                }
            }
        }
        for (WorkerRegistration r : plan.toRegister()) {
            if (failed.contains(r.key())) {
                continue;
            }
            try {
                client.register(replica, r, spec.getModelName(), spec.getTenantId(), spec.getBlockSize());
                made++;
            } catch (IndexerClientException e) {
                errors.add(e.getMessage());
                failed.add(r.key());
            }
        }
        return new Applied(made, removed, Set.copyOf(failed), List.copyOf(errors));
    }
}
