package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;

@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class StatefulSetDependent extends CRUDKubernetesDependentResource<StatefulSet, KvIndexer> {

    @Override
    protected StatefulSet desired(KvIndexer primary, Context<KvIndexer> context) {
        StatefulSet existing = context.getSecondaryResource(StatefulSet.class).orElse(null);
        String policy = existing == null
                ? IndexerDesiredState.POD_MANAGEMENT
                : existing.getSpec().getPodManagementPolicy();
        return IndexerDesiredState.statefulSet(primary, policy, StateVolume.effective(primary, existing));
    }
}
