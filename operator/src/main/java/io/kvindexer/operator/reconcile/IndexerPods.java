package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.SecondaryToPrimaryMapper;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.util.List;

/**
 * The informer over indexer replica pods (ours, by label), the same shape in both controllers, and how a
 * reconciler reads one KvIndexer's replicas from it. It watches the controller's namespaces
 * (OperatorSettings#watchNamespaces).
 */
public final class IndexerPods {
    private IndexerPods() {}

    public static <P extends HasMetadata> InformerEventSourceConfiguration<Pod> informer(
            String name, Class<P> primary, SecondaryToPrimaryMapper<Pod> mapper) {
        return InformerEventSourceConfiguration.from(Pod.class, primary)
                .withName(name)
                .withNamespacesInheritedFromController()
                .withLabelSelector(IndexerNames.MANAGED_SELECTOR)
                .withSecondaryToPrimaryMapper(mapper)
                .build();
    }

    /**
     * The replica pods of {@code kvi} in the informer named {@code name}, as {@link IndexerReplica}s. Read through
     * the informer's cache interface only.
     */
    @SuppressWarnings("unchecked")
    public static <P extends HasMetadata> List<IndexerReplica> replicas(
            Context<P> context, String name, KvIndexer kvi) {
        var pods = (ResourceCache<Pod>) context.eventSourceRetriever().getEventSourceFor(Pod.class, name);
        String instance = kvi.getMetadata().getName();
        return IndexerReplica.of(
                kvi,
                pods.list(
                                kvi.getMetadata().getNamespace(),
                                p -> instance.equals(p.getMetadata().getLabels().get(IndexerNames.LABEL_INSTANCE)))
                        .toList());
    }
}
