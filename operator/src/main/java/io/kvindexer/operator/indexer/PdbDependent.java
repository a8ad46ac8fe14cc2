package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;

/** Exists only while replicas &gt; 1 (the workflow deletes it when the precondition turns false). */
@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class PdbDependent extends CRUDKubernetesDependentResource<PodDisruptionBudget, KvIndexer> {

    public PdbDependent() {
        super(PodDisruptionBudget.class);
    }

    @Override
    protected PodDisruptionBudget desired(KvIndexer primary, Context<KvIndexer> context) {
        return IndexerDesiredState.podDisruptionBudget(primary);
    }

    /** Precondition of the PDB dependent. */
    public static class MoreThanOneReplica implements Condition<PodDisruptionBudget, KvIndexer> {
        @Override
        public boolean isMet(
                DependentResource<PodDisruptionBudget, KvIndexer> dependentResource,
                KvIndexer primary,
                Context<KvIndexer> context) {
            return primary.getSpec().getReplicas() != null && primary.getSpec().getReplicas() > 1;
        }
    }
}
