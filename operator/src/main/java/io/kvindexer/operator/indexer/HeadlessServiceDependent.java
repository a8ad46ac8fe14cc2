package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.Service;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.kvindexer.operator.common.IndexerNames;

@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class HeadlessServiceDependent extends IndexerDependent<Service> {

    public HeadlessServiceDependent() {
        super(Service.class, IndexerDesiredState::headlessService);
    }
}
