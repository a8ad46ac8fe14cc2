package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;

/** Exists only while {@code spec.autoscaling} is set (the workflow deletes it when the field is removed). */
@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class HpaDependent extends CRUDKubernetesDependentResource<HorizontalPodAutoscaler, KvIndexer> {

    public HpaDependent() {
        super(HorizontalPodAutoscaler.class);
    }

    @Override
    protected HorizontalPodAutoscaler desired(KvIndexer primary, Context<KvIndexer> context) {
        return IndexerDesiredState.horizontalPodAutoscaler(primary);
    }

    /** Precondition of the HPA dependent. */
    public static class AutoscalingSet implements Condition<HorizontalPodAutoscaler, KvIndexer> {
        @Override
        public boolean isMet(
                DependentResource<HorizontalPodAutoscaler, KvIndexer> dependentResource,
                KvIndexer primary,
                Context<KvIndexer> context) {
            return primary.getSpec().getAutoscaling() != null;
        }
    }
}
