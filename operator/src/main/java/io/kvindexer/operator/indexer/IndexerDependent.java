package io.kvindexer.operator.indexer;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.kvindexer.operator.crd.v1alpha1.KvIndexer;
import java.util.function.Function;

/**
 * A dependent of a KvIndexer whose desired object is a pure function of the KvIndexer ({@link IndexerDesiredState}).
 * Each subclass still carries its own {@code @KubernetesDependent}: JOSDK reads the annotation from the concrete
 * class only.
 */
abstract class IndexerDependent<R extends HasMetadata> extends CRUDKubernetesDependentResource<R, KvIndexer> {
    private final Function<KvIndexer, R> desired;

    IndexerDependent(Class<R> type, Function<KvIndexer, R> desired) {
        super(type);
        this.desired = desired;
    }

    @Override
    protected R desired(KvIndexer primary, Context<KvIndexer> context) {
        return desired.apply(primary);
    }
}
