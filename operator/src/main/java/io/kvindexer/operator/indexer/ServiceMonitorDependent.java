package io.kvindexer.operator.indexer;

import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.reconcile.IndexerPods;
import java.util.Objects;

/**
 * The optional ServiceMonitor as a dependent: active only where the Prometheus Operator's CRD is installed (so no
 * informer is started for a type the cluster lacks), created while {@code spec.serviceMonitor} is true and deleted
 * by the workflow when it turns false. Its endpoints follow the replica pods too ({@link ServiceMonitors#desired}).
 */
@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class ServiceMonitorDependent extends IndexerDependent<ServiceMonitor> {

    public ServiceMonitorDependent() {
        super(ServiceMonitor.class, ServiceMonitors::desired);
    }

    /** With the replica pods: while a change of TLS rolls, the ServiceMonitor has an endpoint per scheme served. */
    @Override
    protected ServiceMonitor desired(KvIndexer primary, Context<KvIndexer> context) {
        return ServiceMonitors.desired(
                primary, IndexerPods.replicas(context, KvIndexerReconciler.INDEXER_PODS, primary));
    }

    /**
     * The generic matcher passes an actual object that holds more than the desired one (an extra list element
     * included), so the endpoint of a scheme no pod serves any more would stay: the spec must be equal.
     */
    @Override
    public Matcher.Result<ServiceMonitor> match(
            ServiceMonitor actual, ServiceMonitor desired, KvIndexer primary, Context<KvIndexer> context) {
        Matcher.Result<ServiceMonitor> fields = super.match(actual, desired, primary, context);
        boolean sameSpec = Objects.equals(
                actual.getAdditionalProperties().get("spec"),
                desired.getAdditionalProperties().get("spec"));
        return fields.matched() && sameSpec ? fields : Matcher.Result.computed(false, desired);
    }
}
