package io.kvindexer.operator.indexer;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.kvindexer.operator.common.IndexerNames;

/**
 * The optional ServiceMonitor as a dependent: active only where the Prometheus Operator's CRD is installed (so no
 * informer is started for a type the cluster lacks), created while {@code spec.serviceMonitor} is true and deleted
 * by the workflow when it turns false.
 */
@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class ServiceMonitorDependent extends IndexerDependent<ServiceMonitor> {

    public ServiceMonitorDependent() {
        super(ServiceMonitor.class, ServiceMonitors::desired);
    }
}
