package io.kvindexer.operator.worker;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvindexer.operator.client.WorkerRegistration;
import io.kvindexer.operator.crd.v1alpha1.KvWorkerSpec;
import io.kvindexer.operator.reconcile.PodConditions;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * Desired registrations: every Ready engine pod with an IP × every dp rank r, publishing on {@code zmqPort + r} and
 * replaying on {@code replayPort + r}. Pods whose instance id cannot be read are reported, not registered.
 */
public record DesiredRegistrations(List<EngineTarget> targets, Map<String, String> podErrors) {

    public static DesiredRegistrations of(KvWorkerSpec spec, Collection<Pod> enginePods) {
        return of(spec, enginePods, ReadinessHold.NONE);
    }

    /** As {@link #of(KvWorkerSpec, Collection)}, keeping the not-Ready pods that {@code hold} holds. */
    public static DesiredRegistrations of(KvWorkerSpec spec, Collection<Pod> enginePods, ReadinessHold hold) {
        List<EngineTarget> targets = new ArrayList<>();
        Map<String, String> errors = new LinkedHashMap<>();
        Map<Long, String> seen = new HashMap<>();
        enginePods.stream()
                .filter(p -> PodConditions.isReady(p)
                        || hold.held().contains(p.getMetadata().getName()))
                .sorted(Comparator.comparing(p -> p.getMetadata().getName()))
                .forEach(pod -> {
                    String name = pod.getMetadata().getName();
                    long id;
                    try {
                        id = InstanceIds.of(pod, spec.getInstanceIdAnnotation());
                    } catch (IllegalArgumentException e) {
                        errors.put(name, e.getMessage());
                        return;
                    }
                    String clash = seen.putIfAbsent(id, name);
                    if (clash != null) {
                        errors.put(name, "instance id " + Long.toUnsignedString(id) + " already used by pod " + clash);
                        return;
                    }
                    String ip = pod.getStatus().getPodIP();
                    List<WorkerRegistration> ranks = IntStream.range(0, spec.getDataParallelSize())
                            .mapToObj(r -> new WorkerRegistration(
                                    id,
                                    r,
                                    endpoint(ip, spec.getZmqPort() + r),
                                    spec.getReplayPort() == null ? null : endpoint(ip, spec.getReplayPort() + r),
                                    name))
                            .toList();
                    targets.add(
                            new EngineTarget(name, id, ranks, pod.getMetadata().getUid()));
                });
        return new DesiredRegistrations(List.copyOf(targets), Map.copyOf(errors));
    }

    /** The same targets with more pods reported (pod → why it is not registered). */
    public DesiredRegistrations withErrors(Map<String, String> more) {
        if (more.isEmpty()) {
            return this;
        }
        Map<String, String> all = new LinkedHashMap<>(podErrors);
        all.putAll(more);
        return new DesiredRegistrations(targets, Map.copyOf(all));
    }

    /** Every (instance, rank) registration of every target. */
    public List<WorkerRegistration> registrations() {
        return targets.stream().flatMap(t -> t.registrations().stream()).toList();
    }

    /** The instance ids of the targets. */
    public java.util.Set<Long> instanceIds() {
        return targets.stream().map(EngineTarget::instanceId).collect(java.util.stream.Collectors.toSet());
    }

    /** {@code tcp://<ip>:<port>}, an IPv6 address in brackets. */
    static String endpoint(String ip, int port) {
        return "tcp://" + (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + port;
    }
}
