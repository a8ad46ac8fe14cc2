package io.kvindexer.operator.worker;

import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.IndexerResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.PrimaryToSecondaryMapper;
import io.javaoperatorsdk.operator.processing.event.source.SecondaryToPrimaryMapper;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;
import io.kvindexer.operator.reconcile.LabelSelectors;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which KvWorkers an event concerns. Engine pods map through each KvWorker's selector (a scan of one namespace's
 * KvWorkers: selectors come from the resources, so no index can answer it); indexer pods and KvIndexers map through
 * the primary-cache index on {@code spec.indexerRef}.
 */
public final class WorkerMappers {
    /** Primary-cache index: "namespace/indexerRef" of each KvWorker. */
    public static final String BY_INDEXER_REF = "by-indexer-ref";

    private WorkerMappers() {}

    public static List<String> indexerRefKey(KvWorker w) {
        return w.getSpec() == null || w.getSpec().getIndexerRef() == null
                ? List.of()
                : List.of(w.getMetadata().getNamespace() + "/" + w.getSpec().getIndexerRef());
    }

    /**
     * An engine pod → the KvWorkers of its namespace whose (valid) selector matches its labels, and those whose status
     * lists it: JOSDK maps a pod's new state only, and a pod that lost the label its KvWorker selects by is to be
     * unregistered now, not at the next resync.
     */
    public static SecondaryToPrimaryMapper<Pod> enginePodToWorkers(IndexerResourceCache<KvWorker> workers) {
        return pod -> workers.list(pod.getMetadata().getNamespace())
                .filter(w -> w.getSpec() != null
                                && LabelSelectors.validate(w.getSpec().getSelector()) == null
                                && LabelSelectors.matches(
                                        w.getSpec().getSelector(),
                                        pod.getMetadata().getLabels())
                        || lists(w, pod.getMetadata().getName()))
                .map(ResourceID::fromResource)
                .collect(Collectors.toSet());
    }

    private static boolean lists(KvWorker w, String pod) {
        return w.getStatus() != null
                && w.getStatus().pods() != null
                && w.getStatus().pods().stream().anyMatch(p -> pod.equals(p.pod()));
    }

    /** An indexer replica pod → the KvWorkers that reference its KvIndexer (from the pod's instance label). */
    public static SecondaryToPrimaryMapper<Pod> indexerPodToWorkers(IndexerResourceCache<KvWorker> workers) {
        return pod -> byIndexerRef(
                workers, pod.getMetadata().getNamespace(), labels(pod).get(IndexerNames.LABEL_INSTANCE));
    }

    /** A KvIndexer → the KvWorkers that reference it. */
    public static SecondaryToPrimaryMapper<KvIndexer> indexerToWorkers(IndexerResourceCache<KvWorker> workers) {
        return kvi -> byIndexerRef(
                workers, kvi.getMetadata().getNamespace(), kvi.getMetadata().getName());
    }

    /** A KvWorker → its KvIndexer. */
    public static PrimaryToSecondaryMapper<KvWorker> workerToIndexer() {
        return w -> w.getSpec() == null || w.getSpec().getIndexerRef() == null
                ? Set.of()
                : Set.of(new ResourceID(
                        w.getSpec().getIndexerRef(), w.getMetadata().getNamespace()));
    }

    private static Set<ResourceID> byIndexerRef(IndexerResourceCache<KvWorker> workers, String ns, String ref) {
        if (ref == null) {
            return Set.of();
        }
        return workers.byIndex(BY_INDEXER_REF, ns + "/" + ref).stream()
                .map(ResourceID::fromResource)
                .collect(Collectors.toSet());
    }

    private static Map<String, String> labels(Pod pod) {
        return pod.getMetadata().getLabels() == null
                ? Map.of()
                : pod.getMetadata().getLabels();
    }
}
