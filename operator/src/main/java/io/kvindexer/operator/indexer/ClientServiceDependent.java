package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.Service;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;

@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class ClientServiceDependent extends CRUDKubernetesDependentResource<Service, KvIndexer> {

    public ClientServiceDependent() {
        super(Service.class);
    }

    @Override
    protected Service desired(KvIndexer primary, Context<KvIndexer> context) {
        return IndexerDesiredState.clientService(primary);
    }
}
