package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.Service;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.kvindexer.operator.common.IndexerNames;

@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class ClientServiceDependent extends IndexerDependent<Service> {

    public ClientServiceDependent() {
        super(Service.class, IndexerDesiredState::clientService);
    }
}
