package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.api.model.Pod;
import io.kvindexer.operator.client.IndexerEndpoint;
import io.kvindexer.operator.client.ReplicaAccess;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.common.ServedAs;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.IntStream;

/**
 * A replica pod of a KvIndexer as the reconcilers see it: ordinal, pod name, pod IP (null until scheduled),
 * Ready condition, whether it is running (has an IP, not terminating), its incarnation: pod uid, IP and container
 * restarts, which change whenever the process behind the address may have started over empty; and how it serves,
 * from its own spec ({@link ServedAs}; null when the pod does not say: then the KvIndexer's spec decides).
 */
public record IndexerReplica(
        int ordinal, String pod, String podIp, boolean ready, boolean running, String incarnation, ServedAs served) {

    public IndexerReplica(int ordinal, String pod, String podIp, boolean ready, boolean running) {
        this(ordinal, pod, podIp, ready, running, pod + "@" + podIp, null);
    }

    /** The URL the operator itself calls: pod IP + spec.port. */
    public IndexerEndpoint endpoint(int port) {
        return IndexerEndpoint.of(pod, podIp, port);
    }

    /** The same, reached as {@code access} says (HTTPS, token). */
    public IndexerEndpoint endpoint(int port, ReplicaAccess access) {
        return IndexerEndpoint.of(pod, podIp, port, access);
    }

    /**
     * The stable URL of every replica of the desired size, in the scheme its pod serves ({@link ServedAs}; the spec's
     * for a replica with no pod yet, or one that does not say), in ordinal order.
     */
    public static List<String> stableUrls(KvIndexer kvi, Collection<IndexerReplica> replicas) {
        Map<Integer, String> schemes = new HashMap<>();
        replicas.stream()
                .filter(r -> r.served() != null)
                .forEach(r -> schemes.put(r.ordinal(), r.served().scheme()));
        String fromSpec = IndexerSecurity.scheme(kvi);
        return IntStream.range(0, kvi.getSpec().getReplicas())
                .mapToObj(i -> IndexerNames.stableUrl(kvi, i, schemes.getOrDefault(i, fromSpec)))
                .toList();
    }

    /** The replica pods of {@code kvi} among {@code pods}, ordinals below the desired size, by ordinal. */
    public static List<IndexerReplica> of(KvIndexer kvi, Collection<Pod> pods) {
        int size = kvi.getSpec().getReplicas() == null ? 0 : kvi.getSpec().getReplicas();
        return pods.stream()
                .filter(p -> kvi.getMetadata().getName().equals(labels(p).get(IndexerNames.LABEL_INSTANCE)))
                .map(p -> new IndexerReplica(
                        IndexerNames.ordinalOf(kvi, p.getMetadata().getName()),
                        p.getMetadata().getName(),
                        podIp(p),
                        PodConditions.isReady(p),
                        PodConditions.isRunning(p),
                        incarnation(p),
                        ServedAs.of(p)))
                .filter(r -> r.ordinal() >= 0 && r.ordinal() < size)
                .sorted(Comparator.comparingInt(IndexerReplica::ordinal))
                .toList();
    }

    /**
     * The replica pods among {@code pods} of a KvIndexer that no longer exists (so no desired size): every pod
     * still there, by name. Ordinals are not known here (-1).
     */
    public static List<IndexerReplica> of(Collection<Pod> pods) {
        return pods.stream()
                .map(p -> new IndexerReplica(
                        -1,
                        p.getMetadata().getName(),
                        podIp(p),
                        PodConditions.isReady(p),
                        PodConditions.isRunning(p),
                        incarnation(p),
                        ServedAs.of(p)))
                .sorted(Comparator.comparing(IndexerReplica::pod))
                .toList();
    }

    private static Map<String, String> labels(Pod p) {
        return Objects.requireNonNullElse(p.getMetadata().getLabels(), Map.of());
    }

    static String incarnation(Pod p) {
        int restarts = p.getStatus() == null || p.getStatus().getContainerStatuses() == null
                ? 0
                : p.getStatus().getContainerStatuses().stream()
                        .mapToInt(c -> c.getRestartCount() == null ? 0 : c.getRestartCount())
                        .sum();
        return p.getMetadata().getUid() + "/" + podIp(p) + "/" + restarts;
    }

    private static String podIp(Pod p) {
        String ip = p.getStatus() == null ? null : p.getStatus().getPodIP();
        return ip == null || ip.isBlank() ? null : ip;
    }
}
