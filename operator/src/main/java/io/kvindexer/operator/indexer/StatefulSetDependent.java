package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
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
import java.util.Map;
import java.util.Objects;
import java.util.Set;

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
        if (result.matched()
                && !(Objects.equals(indexerArgs(actual), indexerArgs(desired))
                        && Objects.equals(Overridden.of(actual), Overridden.of(desired)))) {
            return Matcher.Result.computed(false, desired);
        }
        return result;
    }

    /**
     * What {@code spec.podTemplate} and {@code spec.resources} put into the pod template, in parts the API server
     * defaults nothing in (of the env and the resources, the names: a value that changed is a change to the generic
     * matcher too): one taken out of the spec must go from the template, which the generic matcher would keep.
     */
    record Overridden(
            Map<String, String> labels,
            Map<String, String> nodeSelector,
            List<Toleration> tolerations,
            Affinity affinity,
            List<TopologySpreadConstraint> spread,
            List<String> env,
            Set<String> limits,
            Set<String> requests) {

        static Overridden of(StatefulSet sts) {
            if (sts.getSpec() == null || sts.getSpec().getTemplate() == null) {
                return null;
            }
            PodTemplateSpec template = sts.getSpec().getTemplate();
            PodSpec pod = template.getSpec();
            Container c = pod == null
                    ? null
                    : pod.getContainers().stream()
                            .filter(x -> IndexerNames.CONTAINER.equals(x.getName()))
                            .findFirst()
                            .orElse(null);
            ResourceRequirements resources = c == null ? null : c.getResources();
            return new Overridden(
                    orEmpty(
                            template.getMetadata() == null
                                    ? null
                                    : template.getMetadata().getLabels()),
                    orEmpty(pod == null ? null : pod.getNodeSelector()),
                    orEmpty(pod == null ? null : pod.getTolerations()),
                    pod == null ? null : pod.getAffinity(),
                    orEmpty(pod == null ? null : pod.getTopologySpreadConstraints()),
                    c == null || c.getEnv() == null
                            ? List.of()
                            : c.getEnv().stream().map(EnvVar::getName).toList(),
                    resources == null || resources.getLimits() == null
                            ? Set.of()
                            : Set.copyOf(resources.getLimits().keySet()),
                    resources == null || resources.getRequests() == null
                            ? Set.of()
                            : Set.copyOf(resources.getRequests().keySet()));
        }

        private static <K, V> Map<K, V> orEmpty(Map<K, V> m) {
            return m == null ? Map.of() : m;
        }

        private static <T> List<T> orEmpty(List<T> l) {
            return l == null ? List.of() : l;
        }
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
