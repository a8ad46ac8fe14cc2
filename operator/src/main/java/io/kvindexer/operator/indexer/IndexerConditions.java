package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import io.kvindexer.operator.common.IndexerSecurity;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.util.function.BiPredicate;

/**
 * The workflow conditions of the KvIndexer dependents ({@link KvIndexerReconciler}'s {@code @Workflow}): each looks
 * only at the KvIndexer and the context. JOSDK instantiates them by class, hence one small class per condition.
 */
public final class IndexerConditions {
    private IndexerConditions() {}

    abstract static class OnIndexer<R extends HasMetadata> implements Condition<R, KvIndexer> {
        private final BiPredicate<KvIndexer, Context<KvIndexer>> test;

        OnIndexer(BiPredicate<KvIndexer, Context<KvIndexer>> test) {
            this.test = test;
        }

        @Override
        public boolean isMet(
                DependentResource<R, KvIndexer> dependentResource, KvIndexer primary, Context<KvIndexer> context) {
            return test.test(primary, context);
        }
    }

    /** The PDB exists only while replicas &gt; 1 (the workflow deletes it when this turns false). */
    public static class MoreThanOneReplica extends OnIndexer<PodDisruptionBudget> {
        public MoreThanOneReplica() {
            super((kvi, context) -> moreThanOneReplica(kvi));
        }
    }

    static boolean moreThanOneReplica(KvIndexer kvi) {
        return kvi.getSpec().getReplicas() != null && kvi.getSpec().getReplicas() > 1;
    }

    /** The NetworkPolicy exists unless {@code spec.networkPolicy.enabled} is false. */
    public static class NetworkPolicyWanted extends OnIndexer<NetworkPolicy> {
        public NetworkPolicyWanted() {
            super((kvi, context) -> IndexerSecurity.networkPolicyEnabled(kvi));
        }
    }

    /** The HPA exists only while {@code spec.autoscaling} is set. */
    public static class AutoscalingSet extends OnIndexer<HorizontalPodAutoscaler> {
        public AutoscalingSet() {
            super((kvi, context) -> kvi.getSpec().getAutoscaling() != null);
        }
    }

    /** Activation condition of the ServiceMonitor: its CRD is installed (no informer for a type the cluster lacks). */
    public static class ServiceMonitorCrdInstalled extends OnIndexer<ServiceMonitor> {
        public ServiceMonitorCrdInstalled() {
            super((kvi, context) -> ServiceMonitors.crdInstalled(context.getClient()));
        }
    }

    /** Reconcile precondition of the ServiceMonitor: the spec asks for it (false: the workflow deletes it). */
    public static class ServiceMonitorWanted extends OnIndexer<ServiceMonitor> {
        public ServiceMonitorWanted() {
            super((kvi, context) -> ServiceMonitors.wanted(kvi));
        }
    }
}
