package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.RegisteredWorker;
import io.kvindexer.operator.client.WorkerKey;
import io.kvindexer.operator.client.WorkerRegistration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * What to change on one replica so that its registrations equal the desired ones: pure, level-triggered and
 * idempotent (applying the plan and planning again yields an empty plan).
 *
 * <p>Only instances this KvWorker owns are ever removed: the desired ones and those it registered before (its
 * status). Registrations of other KvWorkers or made by hand are left alone. A rank whose endpoint changed (the pod
 * got a new IP), or that is forced ({@code forceReregister}: its replay endpoint changed, or its pod is another one
 * under the same name), is unregistered and registered again;
 * a registration of an owned instance under another model or tenant is removed, and one under another block size
 * (the KvWorker's {@code blockSize} was corrected) is unregistered and registered again with the new one: the
 * indexer never changes a registered worker's block size, and refuses another worker with a size its index does not
 * have.
 */
public record RegistrationPlan(List<Unregistration> toUnregister, List<WorkerRegistration> toRegister) {

    /** One dp rank to remove, with the (model, tenant) it is registered under. */
    public record Unregistration(long instanceId, int dpRank, String modelName, String tenantId) {
        public WorkerKey key() {
            return new WorkerKey(instanceId, dpRank);
        }
    }

    public static RegistrationPlan of(
            Collection<WorkerRegistration> desired,
            Collection<RegisteredWorker> actual,
            String modelName,
            String tenantId,
            int blockSize,
            Set<Long> owned,
            Set<Long> forceReregister) {
        Map<Long, Map<Integer, WorkerRegistration>> want = new HashMap<>();
        for (WorkerRegistration r : desired) {
            want.computeIfAbsent(r.instanceId(), k -> new HashMap<>()).put(r.dpRank(), r);
        }
        Set<Long> ownedAll = new HashSet<>(owned);
        ownedAll.addAll(want.keySet());

        List<Unregistration> unregister = new ArrayList<>();
        Set<WorkerKey> keep = new HashSet<>(); // already registered as desired
        for (RegisteredWorker w : actual) {
            if (!ownedAll.contains(w.instanceId())) {
                continue;
            }
            boolean sameKey = Objects.equals(modelName, w.modelName()) && Objects.equals(tenantId, w.tenantId());
            // 0: the replica did not say (an older indexer); the registration is taken as it is
            boolean sameSize = w.blockSize() == 0 || w.blockSize() == blockSize;
            Map<Integer, WorkerRegistration> ranks = sameKey ? want.getOrDefault(w.instanceId(), Map.of()) : Map.of();
            for (Map.Entry<Integer, String> e : w.endpoints().entrySet()) {
                WorkerRegistration d = ranks.get(e.getKey());
                boolean good = d != null
                        && sameSize
                        && d.endpoint().equals(e.getValue())
                        && !forceReregister.contains(w.instanceId());
                if (good) {
                    keep.add(new WorkerKey(w.instanceId(), e.getKey()));
                } else {
                    unregister.add(new Unregistration(w.instanceId(), e.getKey(), w.modelName(), w.tenantId()));
                }
            }
        }
        List<WorkerRegistration> register = desired.stream()
                .filter(r -> !keep.contains(r.key()))
                .sorted(Comparator.comparingLong(WorkerRegistration::instanceId)
                        .thenComparingInt(WorkerRegistration::dpRank))
                .toList();
        unregister.sort(Comparator.comparingLong(Unregistration::instanceId).thenComparingInt(Unregistration::dpRank));
        return new RegistrationPlan(List.copyOf(unregister), register);
    }

    public boolean isEmpty() {
        return toUnregister.isEmpty() && toRegister.isEmpty();
    }
}
