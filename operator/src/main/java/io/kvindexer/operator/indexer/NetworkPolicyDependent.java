package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.GenericKubernetesResourceMatcher;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.crd.v1alpha1.KvWorker;

/**
 * The replicas' NetworkPolicy ({@link IndexerNetworkPolicy}), kept while {@code spec.networkPolicy.enabled} is not
 * false (the workflow deletes it when it turns false). The KvWorkers that name the KvIndexer are read when it is
 * reconciled; a KvWorker change triggers that reconcile ({@link KvIndexerReconciler}'s KvWorker informer).
 */
@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class NetworkPolicyDependent extends CRUDKubernetesDependentResource<NetworkPolicy, KvIndexer> {

    @Override
    protected NetworkPolicy desired(KvIndexer primary, Context<KvIndexer> context) {
        var workers = context.getClient()
                .resources(KvWorker.class)
                .inNamespace(primary.getMetadata().getNamespace())
                .list()
                .getItems();
        return IndexerNetworkPolicy.desired(
                primary, workers, System.getenv(IndexerNetworkPolicy.OPERATOR_NAMESPACE_ENV));
    }

    /**
     * The spec as desired, exactly: the generic matcher takes what the actual policy has beyond the desired one for
     * API-server defaults, so a rule or port taken away (a KvWorker moved or deleted, its replay port or ranks
     * removed, an {@code allowTo} entry removed) would stay open for good. The desired policy carries the API
     * server's one default (a port's protocol), so nothing else differs.
     */
    @Override
    public Matcher.Result<NetworkPolicy> match(
            NetworkPolicy actual, NetworkPolicy desired, KvIndexer primary, Context<KvIndexer> context) {
        return GenericKubernetesResourceMatcher.match(desired, actual, false, true, context);
    }
}
