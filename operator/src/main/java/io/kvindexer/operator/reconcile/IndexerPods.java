package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.javaoperatorsdk.operator.api.config.informer.InformerEventSourceConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.api.reconciler.ResourceCache;
import io.javaoperatorsdk.operator.processing.event.source.SecondaryToPrimaryMapper;
import io.javaoperatorsdk.operator.processing.event.source.informer.InformerEventSource;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.observability.OperatorMetrics;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

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
     * The informer's event source; once a replica pod is deleted (scaled down, its KvIndexer deleted), the call
     * metrics of replicas no pod is left for are dropped ({@link OperatorMetrics#retainReplicas}) and what is
     * remembered of it forgotten ({@link Retention}), even when no reconcile follows (no KvIndexer or KvWorker names
     * it any more).
     */
    public static <P extends HasMetadata> InformerEventSource<Pod, P> eventSource(
            InformerEventSourceConfiguration<Pod> configuration,
            EventSourceContext<P> context,
            ControllerServices services) {
        return new InformerEventSource<>(configuration, context) {
            @Override
            public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
                super.onDelete(pod, deletedFinalStateUnknown);
                services.metrics().retainReplicas(names(this));
                services.retention().sweep();
            }
        };
    }

    /**
     * Drops the call metrics of replicas no pod is left for, in the informer named {@code name}: at the end of a
     * reconcile, after its own calls, so that a call that was under way when its replica's pod went does not leave
     * a series behind.
     */
    @SuppressWarnings("unchecked")
    public static <P extends HasMetadata> void retainCallMetrics(
            Context<P> context, String name, OperatorMetrics metrics) {
        metrics.retainReplicas(
                names((ResourceCache<Pod>) context.eventSourceRetriever().getEventSourceFor(Pod.class, name)));
    }

    private static Set<String> names(ResourceCache<Pod> pods) {
        return pods.list(p -> true)
                .map(p -> p.getMetadata().getNamespace() + "/" + p.getMetadata().getName())
                .collect(Collectors.toSet());
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
