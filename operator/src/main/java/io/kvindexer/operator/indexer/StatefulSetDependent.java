package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.kvindexer.operator.common.FormerPeers;
import io.kvindexer.operator.common.IndexerNames;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import io.kvindexer.operator.reconcile.IndexerPods;
import io.kvindexer.operator.reconcile.IndexerReplica;
import java.util.List;
import java.util.Objects;

@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class StatefulSetDependent extends CRUDKubernetesDependentResource<StatefulSet, KvIndexer> {

    @Override
    protected StatefulSet desired(KvIndexer primary, Context<KvIndexer> context) {
        StatefulSet existing = context.getSecondaryResource(StatefulSet.class).orElse(null);
        String policy = existing == null
                ? IndexerDesiredState.POD_MANAGEMENT
                : existing.getSpec().getPodManagementPolicy();
        return IndexerDesiredState.statefulSet(
                primary, policy, StateVolume.effective(primary, existing), formerPeers(primary, context));
    }

    /**
     * The generic matcher takes what the actual object has beyond the desired one for API-server defaults, so a flag
     * taken off the end of the indexer's args (the {@link FormerPeers} ones once every replica serves as the spec says)
     * would stay in the template. The args are all ours, never defaulted: they must be equal.
     */
    @Override
    public Matcher.Result<StatefulSet> match(
            StatefulSet actual, StatefulSet desired, KvIndexer primary, Context<KvIndexer> context) {
        Matcher.Result<StatefulSet> result = super.match(actual, desired, primary, context);
        if (result.matched() && !Objects.equals(indexerArgs(actual), indexerArgs(desired))) {
            return Matcher.Result.computed(false, desired);
        }
        return result;
    }

    private static List<String> indexerArgs(StatefulSet sts) {
        if (sts.getSpec() == null
                || sts.getSpec().getTemplate() == null
                || sts.getSpec().getTemplate().getSpec() == null) {
            return null;
        }
        return sts.getSpec().getTemplate().getSpec().getContainers().stream()
                .filter(c -> IndexerNames.CONTAINER.equals(c.getName()))
                .findFirst()
                .map(Container::getArgs)
                .orElse(null);
    }

    /**
     * What a restarting replica needs to recover from the replica pods that still serve as {@code spec.security} said
     * before (read from each pod's own spec): while a change of it rolls, and until none does.
     */
    static FormerPeers formerPeers(KvIndexer kvi, Context<KvIndexer> context) {
        return FormerPeers.of(
                kvi,
                IndexerPods.replicas(context, KvIndexerReconciler.INDEXER_PODS, kvi).stream()
                        .map(IndexerReplica::served)
                        .toList());
    }
}
