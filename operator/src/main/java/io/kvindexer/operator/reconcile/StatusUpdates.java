package io.kvindexer.operator.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.CustomResource;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.PrimaryUpdateAndCacheUtils;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The one status path of both controllers: JOSDK's {@link PrimaryUpdateAndCacheUtils}, which replaces the whole
 * status (PUT on the status subresource with the resource version: optimistic locking, retried on conflict against
 * the newest cached copy) and puts the answer into the controller's cache, so the next reconcile starts from what
 * was written rather than from an informer a step behind. An unchanged status is not written (keeps the watch
 * quiet). See docs/adr/0003-operator.md, "Status writes".
 */
public final class StatusUpdates {
    private StatusUpdates() {}

    /** @return true when a write was sent */
    public static <S, P extends CustomResource<?, S>> boolean write(Context<P> context, P current, S status) {
        if (Objects.equals(current.getStatus(), status)) {
            return false;
        }
        PrimaryUpdateAndCacheUtils.updateStatusAndCacheResource(current, context, latest -> {
            P copy = context.getClient().getKubernetesSerialization().clone(latest);
            copy.setStatus(status);
            return copy;
        });
        return true;
    }

    /** What a status factory returns: a fresh object holding only name, namespace and {@code status}. */
    public static <S, P extends CustomResource<?, S>> P statusOnly(P current, S status, Supplier<P> blank) {
        P patch = blank.get();
        patch.setMetadata(new ObjectMetaBuilder()
                .withName(current.getMetadata().getName())
                .withNamespace(current.getMetadata().getNamespace())
                .build());
        patch.setSpec(null);
        patch.setStatus(status);
        return patch;
    }

    /** {@code metadata.generation}, 0 where it is not set (objects not yet stored). */
    public static long generation(HasMetadata resource) {
        Long g = resource.getMetadata().getGeneration();
        return g == null ? 0 : g;
    }
}
