package io.kvindexer.operator.worker;

import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Registrations to make anew (unregister, register) although a replica holds them at the right endpoint, because
 * what it holds may be an earlier pod's: {@code everywhere}, on every replica this round, the instances whose pod is
 * another one under the same name (its uid changed; or the status recorded none, as an operator before uids left
 * it: unknown, so made anew once), or whose replay endpoint changed (GET /workers does not show it); {@code pending},
 * per instance, the replicas where an earlier round could not do it (the call failed, the replica was unreachable
 * or not Ready), from {@code status.pods[].reregisterOn}. Forgetting those would leave the old engine's
 * registration standing for good on exactly the replicas that failed, since their endpoint matches.
 */
record Reregistrations(Set<Long> everywhere, Map<Long, List<String>> pending) {
    static final Reregistrations NONE = new Reregistrations(Set.of(), Map.of());

    static Reregistrations of(KvWorker worker, DesiredRegistrations desired) {
        KvWorkerStatus status = worker.getStatus();
        if (status == null || status.pods() == null || status.pods().isEmpty()) {
            return NONE;
        }
        Map<Long, PodRegistration> byId = new HashMap<>();
        for (PodRegistration p : status.pods()) {
            byId.put(Long.parseUnsignedLong(p.instanceId()), p);
        }
        Set<Long> everywhere = new HashSet<>();
        Map<Long, List<String>> pending = new HashMap<>();
        for (EngineTarget t : desired.targets()) {
            PodRegistration p = byId.get(t.instanceId());
            if (p == null) {
                continue; // never registered by us: nothing earlier to replace
            }
            boolean otherPod = t.uid() != null && !t.uid().equals(p.uid());
            boolean replayChanged = Objects.equals(p.endpoint(), t.endpoint())
                    && !Objects.equals(p.replayEndpoint(), t.replayEndpoint());
            if (otherPod || replayChanged) {
                everywhere.add(t.instanceId());
            } else if (!p.pendingOn().isEmpty()) {
                pending.put(t.instanceId(), p.pendingOn());
            }
        }
        return everywhere.isEmpty() && pending.isEmpty() ? NONE : new Reregistrations(everywhere, pending);
    }

    /** The instances to make anew on {@code replica}. */
    Set<Long> on(String replica) {
        if (pending.isEmpty()) {
            return everywhere;
        }
        Set<Long> out = new HashSet<>(everywhere);
        pending.forEach((id, replicas) -> {
            if (replicas.contains(replica)) {
                out.add(id);
            }
        });
        return out;
    }

    /**
     * Where {@code t} is still to be made anew after this round: where it was to be ({@code replicas}, every replica
     * pod of the KvIndexer, Ready or not, when {@link #everywhere}) less the replicas whose outcome has it registered,
     * among the replica pods that still exist; null when nothing is left (the status field is then absent).
     */
    List<String> stillPending(EngineTarget t, Collection<ReplicaOutcome> outcomes, Set<String> replicas) {
        long id = t.instanceId();
        Set<String> left = new TreeSet<>();
        if (everywhere.contains(id)) {
            left.addAll(replicas);
        } else {
            pending.getOrDefault(id, List.of()).stream()
                    .filter(replicas::contains)
                    .forEach(left::add);
        }
        if (left.isEmpty()) {
            return null;
        }
        outcomes.stream().filter(o -> o.registered().contains(id)).forEach(o -> left.remove(o.replica()));
        return left.isEmpty() ? null : List.copyOf(left);
    }
}
