package io.kvindexer.operator.indexer;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;

/**
 * The optional ServiceMonitor as a dependent: active only where the Prometheus Operator's CRD is installed (so no
 * informer is started for a type the cluster lacks), created while {@code spec.serviceMonitor} is true and deleted
 * by the workflow when it turns false.
 */
@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class ServiceMonitorDependent extends CRUDKubernetesDependentResource<ServiceMonitor, KvIndexer> {

    public ServiceMonitorDependent() {
        super(ServiceMonitor.class);
    }

    @Override
    protected ServiceMonitor desired(KvIndexer primary, Context<KvIndexer> context) {
        return ServiceMonitors.desired(primary);
    }

    /** Activation condition: the ServiceMonitor CRD is installed. */
    public static class CrdInstalled implements Condition<ServiceMonitor, KvIndexer> {
        @Override
        public boolean isMet(
                DependentResource<ServiceMonitor, KvIndexer> dependentResource,
                KvIndexer primary,
                Context<KvIndexer> context) {
            return ServiceMonitors.crdInstalled(context.getClient());
        }
    }

    /** Reconcile precondition: the spec asks for it (false: the workflow deletes it). */
    public static class Wanted implements Condition<ServiceMonitor, KvIndexer> {
        @Override
        public boolean isMet(
                DependentResource<ServiceMonitor, KvIndexer> dependentResource,
                KvIndexer primary,
                Context<KvIndexer> context) {
            return ServiceMonitors.wanted(primary);
        }
    }
}
