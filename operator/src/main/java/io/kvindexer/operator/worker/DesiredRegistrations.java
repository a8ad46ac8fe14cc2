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
        List<EngineTarget> targets = new ArrayList<>();
        Map<String, String> errors = new LinkedHashMap<>();
        Map<Long, String> seen = new HashMap<>();
        enginePods.stream()
                .filter(PodConditions::isReady)
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
                    String host = host(pod.getStatus().getPodIP());
                    List<WorkerRegistration> ranks = IntStream.range(0, spec.getDataParallelSize())
                            .mapToObj(r -> new WorkerRegistration(
                                    id,
                                    r,
                                    "tcp://" + host + ":" + (spec.getZmqPort() + r),
                                    spec.getReplayPort() == null
                                            ? null
                                            : "tcp://" + host + ":" + (spec.getReplayPort() + r),
                                    name))
                            .toList();
                    targets.add(new EngineTarget(name, id, ranks));
                });
        return new DesiredRegistrations(List.copyOf(targets), Map.copyOf(errors));
    }

    /** Every (instance, rank) registration of every target. */
    public List<WorkerRegistration> registrations() {
        return targets.stream().flatMap(t -> t.registrations().stream()).toList();
    }

    /** The instance ids of the targets. */
    public java.util.Set<Long> instanceIds() {
        return targets.stream().map(EngineTarget::instanceId).collect(java.util.stream.Collectors.toSet());
    }

    private static String host(String ip) {
        return ip.contains(":") ? "[" + ip + "]" : ip;
    }
}
