package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.kvindexer.operator.common.IndexerNames;

/** Exists only while replicas &gt; 1 ({@link IndexerConditions.MoreThanOneReplica}: the workflow deletes it otherwise). */
@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class PdbDependent extends IndexerDependent<PodDisruptionBudget> {

    public PdbDependent() {
        super(PodDisruptionBudget.class, IndexerDesiredState::podDisruptionBudget);
    }
}
