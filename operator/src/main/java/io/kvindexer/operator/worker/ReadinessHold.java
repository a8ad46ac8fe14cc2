package io.kvindexer.operator.worker;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerStatus.PodRegistration;
import io.kvindexer.operator.reconcile.PodConditions;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code spec.unregisterAfterSeconds}: engine pods kept registered although not Ready, because their readiness has
 * been down for less than that. Unregistering on every flap would hide the engine from every answer and, without
 * the indexer's grace period, cost it its index, which it never announces again. Only a pod that is registered (the
 * status says so), is the very pod registered (its uid, when the status has one: a pod deleted and created again
 * under the same name and IP runs a new engine whose blocks start over), still running at the address it is
 * registered at, and whose Ready condition turned False less than the hold ago is kept; a deleted, recreated,
 * terminating or moved pod is unregistered at once, as is one whose condition carries no transition time.
 *
 * @param held      pod names kept registered although not Ready
 * @param recheckIn just after the first hold runs out (null when nothing is held): the reconcile is due again then
 */
public record ReadinessHold(Set<String> held, Duration recheckIn) {
    public static final ReadinessHold NONE = new ReadinessHold(Set.of(), null);

    public static ReadinessHold of(KvWorker worker, Collection<Pod> enginePods, Instant now) {
        KvWorkerSpec spec = worker.getSpec();
        int seconds = spec.getUnregisterAfterSeconds() == null ? 60 : spec.getUnregisterAfterSeconds();
        if (seconds <= 0 || worker.getStatus() == null || worker.getStatus().pods() == null) {
            return NONE;
        }
        Map<String, PodRegistration> registered = new HashMap<>();
        for (PodRegistration p : worker.getStatus().pods()) {
            if (p.registeredOn() != null && !p.registeredOn().isEmpty()) {
                registered.put(p.pod(), p);
            }
        }
        Set<String> held = new TreeSet<>();
        Duration first = null;
        for (Pod pod : enginePods) {
            PodRegistration r = registered.get(pod.getMetadata().getName());
            if (r == null || PodConditions.isReady(pod) || !PodConditions.isRunning(pod)) {
                continue;
            }
            String endpoint = DesiredRegistrations.endpoint(pod.getStatus().getPodIP(), spec.getZmqPort());
            Instant since = notReadySince(pod);
            if (!endpoint.equals(r.endpoint())
                    || !r.samePod(pod.getMetadata().getUid()) // another pod under the name: its engine is new
                    || since == null) {
                continue;
            }
            Duration left = Duration.between(now, since.plusSeconds(seconds));
            if (left.isPositive()) {
                held.add(pod.getMetadata().getName());
                first = first == null || left.compareTo(first) < 0 ? left : first;
            }
        }
        return held.isEmpty() ? NONE : new ReadinessHold(Set.copyOf(held), first.plusMillis(100));
    }

    /** When the pod's Ready condition last turned (it is not True now), or null when the kubelet did not say. */
    static Instant notReadySince(Pod pod) {
        if (pod.getStatus().getConditions() == null) {
            return null;
        }
        for (PodCondition c : pod.getStatus().getConditions()) {
            if ("Ready".equals(c.getType()) && c.getLastTransitionTime() != null) {
                try {
                    return Instant.parse(c.getLastTransitionTime());
                } catch (DateTimeParseException e) {
                    return null;
                }
            }
        }
        return null;
    }
}
