package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
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
 * created with (the pod template mounts them if it has them), and a spec that asks for others is reported instead
 * ({@link #notApplied}).
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

    /** Null when the existing StatefulSet's volume is what the spec asks for, else what differs and what to do. */
    public static String notApplied(KvIndexer kvi, StatefulSet existing) {
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
        Quantity size = have.getSpec().getResources() == null
                        || have.getSpec().getResources().getRequests() == null
                ? null
                : have.getSpec().getResources().getRequests().get("storage");
        boolean sameSize =
                size != null && Quantity.getAmountInBytes(size).compareTo(Quantity.getAmountInBytes(p.size())) == 0;
        boolean sameClass = p.storageClassName() == null
                || Objects.equals(p.storageClassName(), have.getSpec().getStorageClassName());
        if (sameSize && sameClass) {
            return null;
        }
        return "spec.persistence (" + p.size() + (p.storageClassName() == null ? "" : ", " + p.storageClassName())
                + ") is not applied: the replicas' volumes are " + size
                + (have.getSpec().getStorageClassName() == null
                        ? ""
                        : ", " + have.getSpec().getStorageClassName())
                + recreate;
    }
}
