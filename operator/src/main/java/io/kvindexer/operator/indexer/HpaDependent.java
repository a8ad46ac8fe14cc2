package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.kvindexer.operator.common.IndexerNames;

/** Exists only while {@code spec.autoscaling} is set (the workflow deletes it when the field is removed). */
@KubernetesDependent(informer = @Informer(labelSelector = IndexerNames.MANAGED_SELECTOR))
public class HpaDependent extends IndexerDependent<HorizontalPodAutoscaler> {

    public HpaDependent() {
        super(HorizontalPodAutoscaler.class, IndexerDesiredState::horizontalPodAutoscaler);
    }
}
