package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.Persistence;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * {@code spec.persistence} → a volume per replica: the StatefulSet's volume claim template {@value #NAME}, mounted at
 * {@value #MOUNT_PATH}, where the indexer keeps its snapshots ({@code --snapshot-dir}, {@code --snapshot-interval}).
 * A StatefulSet's volume claims cannot change once it exists: an existing StatefulSet keeps the claims it was
 * created with (the pod template mounts them if it has them); a larger size is given to the claims themselves, and
 * any other change is reported instead ({@link #notApplied}).
 */
public final class StateVolume {
    public static final String NAME = "state";
    public static final String MOUNT_PATH = "/var/lib/kv-indexer";

    private StateVolume() {}

    /** The claim templates {@code kvi}'s spec asks for: one, or none without {@code spec.persistence}. */
    static List<PersistentVolumeClaim> wanted(KvIndexer kvi) {
        Persistence p = kvi.getSpec().getPersistence();
        if (p == null || p.size() == null) {
            return List.of();
        }
        return List.of(new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withName(NAME)
                .withLabels(IndexerNames.selectorLabels(kvi))
                .endMetadata()
                .withNewSpec()
                .withAccessModes("ReadWriteOnce")
                .withStorageClassName(p.storageClassName())
                .withVolumeMode("Filesystem")
                .withNewResources()
                .withRequests(Map.of("storage", p.size()))
                .endResources()
                .endSpec()
                .build());
    }

    /** The claim templates the StatefulSet gets: those it has when it exists (they cannot change), else the spec's. */
    static List<PersistentVolumeClaim> effective(KvIndexer kvi, StatefulSet existing) {
        if (existing == null || existing.getSpec() == null) {
            return wanted(kvi);
        }
        List<PersistentVolumeClaim> claims = existing.getSpec().getVolumeClaimTemplates();
        return claims == null ? List.of() : List.copyOf(claims);
    }

    /** Whether {@code claims} hold the state volume (then the container mounts it and keeps its snapshots there). */
    static boolean mounted(List<PersistentVolumeClaim> claims) {
        return claims.stream().anyMatch(c -> NAME.equals(c.getMetadata().getName()));
    }

    /** The indexer flags of a mounted state volume. */
    static List<String> args(KvIndexer kvi) {
        List<String> args = new ArrayList<>(List.of("--snapshot-dir", MOUNT_PATH));
        Persistence p = kvi.getSpec().getPersistence();
        if (p != null && p.snapshotIntervalSeconds() != null) {
            args.addAll(List.of("--snapshot-interval", p.snapshotIntervalSeconds() + "s"));
        }
        return args;
    }

    /**
     * Null when the replicas' volumes are what the spec asks for, else what differs and what to do. A larger size than
     * the StatefulSet's claim template is applied to the claims themselves ({@link #growClaims}): the template cannot
     * change, but a claim can grow where its StorageClass allows volume expansion.
     */
    public static String notApplied(KvIndexer kvi, StatefulSet existing, KubernetesClient client) {
        if (existing == null || existing.getSpec() == null) {
            return null;
        }
        Persistence p = kvi.getSpec().getPersistence();
        PersistentVolumeClaim have = effective(kvi, existing).stream()
                .filter(c -> NAME.equals(c.getMetadata().getName()))
                .findFirst()
                .orElse(null);
        String recreate = "; a StatefulSet's volume claims cannot change: to apply it, kubectl delete statefulset "
                + existing.getMetadata().getName() + " --cascade=orphan (the operator creates it again, and the"
                + " replicas restart one at a time)";
        if (p == null || p.size() == null) {
            return have == null ? null : "spec.persistence was removed, the replicas keep their volumes" + recreate;
        }
        if (have == null) {
            return "spec.persistence is not applied: the StatefulSet was created without volumes" + recreate;
        }
        Quantity size = requested(have);
        boolean sameClass = p.storageClassName() == null
                || Objects.equals(p.storageClassName(), have.getSpec().getStorageClassName());
        int grows = size == null ? 1 : bytes(p.size()).compareTo(bytes(size));
        if (sameClass && grows == 0) {
            return null;
        }
        if (sameClass && grows > 0) {
            return growClaims(client, kvi, existing, p.size());
        }
        // the template's claims stay as they are after the recreation: each replica's is made anew only once deleted
        return "spec.persistence (" + p.size() + (p.storageClassName() == null ? "" : ", " + p.storageClassName())
                + ") is not applied: the replicas' volumes are " + size
                + (have.getSpec().getStorageClassName() == null
                        ? ""
                        : ", " + have.getSpec().getStorageClassName())
                + (sameClass ? "; a volume cannot shrink" : "")
                + recreate + "; then, one replica at a time, kubectl delete pvc " + NAME + "-<pod> and the pod (it"
                + " comes back on a new volume and recovers from its peers)";
    }

    /**
     * Asks each existing claim of a current replica ({@code state-<pod>}) for {@code size} where it
     * asks for less. Null when every one asks for it now (Kubernetes then grows the volume, and the file system with
     * the next mount where the driver needs one); a claim made later from the template's smaller size is grown by a
     * later reconcile (a new replica's pod is an event). Else which claims could not grow, and why.
     */
    static String growClaims(KubernetesClient client, KvIndexer kvi, StatefulSet existing, Quantity size) {
        String ns = kvi.getMetadata().getNamespace();
        int replicas = existing.getSpec().getReplicas() == null
                ? 1
                : existing.getSpec().getReplicas();
        List<String> refused = new ArrayList<>();
        for (int ordinal = 0; ordinal < replicas; ordinal++) {
            String name = NAME + "-" + IndexerNames.pod(kvi, ordinal); // what the StatefulSet names its claims
            Resource<PersistentVolumeClaim> claim =
                    client.persistentVolumeClaims().inNamespace(ns).withName(name);
            try {
                PersistentVolumeClaim current = claim.get();
                Quantity asked = current == null ? null : requested(current);
                if (current == null || (asked != null && bytes(asked).compareTo(bytes(size)) >= 0)) {
                    continue;
                }
                claim.patch(
                        PatchContext.of(PatchType.JSON_MERGE),
                        "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"" + size + "\"}}}}");
            } catch (KubernetesClientException e) { // refused, or not allowed (an older chart's RBAC)
                refused.add(name + " ("
                        + (e.getStatus() == null
                                ? e.getMessage()
                                : e.getStatus().getMessage()) + ")");
            }
        }
        return refused.isEmpty()
                ? null
                : "spec.persistence (" + size + ") is not applied: " + String.join(", ", refused)
                        + " could not grow; its StorageClass must allow volume expansion (allowVolumeExpansion: true),"
                        + " and the operator get and patch persistentvolumeclaims";
    }

    private static Quantity requested(PersistentVolumeClaim claim) {
        return claim.getSpec() == null
                        || claim.getSpec().getResources() == null
                        || claim.getSpec().getResources().getRequests() == null
                ? null
                : claim.getSpec().getResources().getRequests().get("storage");
    }

    private static java.math.BigDecimal bytes(Quantity q) {
        return Quantity.getAmountInBytes(q);
    }
}
