package io.kvindexer.operator.crd.v1alpha1;

import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Writes a whole status with one JSON Patch operation ({@code add /status}: creates or replaces it) on the status
 * subresource, and only when it differs from the current one.
 *
 * <p>Why not JOSDK's patchStatus: with server-side apply off it sends a JSON Patch computed against the cached
 * object; when that cache is a step behind (a status written a moment ago), list-index operations fail (seen on
 * the CRUD mock: "Array index 1 out of bounds at /status/replicas") and the status lags until a retry. Replacing
 * the whole status has no such dependency (a JSON merge patch would too, but the CRUD mock appends lists in merge
 * patches instead of replacing them). Skipping equal statuses keeps the watch quiet.
 */
public final class StatusWriter {
    private StatusWriter() {
    }

    /** @return true when a patch was sent */
    public static <S, T extends CustomResource<?, S>> boolean write(KubernetesClient client, T current, T fresh) {
        if (Objects.equals(current.getStatus(), fresh.getStatus())) {
            return false;
        }
        String body = Serialization.asJson(List.of(Map.of("op", "add", "path", "/status", "value", fresh.getStatus())));
        @SuppressWarnings("unchecked")
        Class<T> type = (Class<T>) current.getClass();
        client.resources(type).inNamespace(current.getMetadata().getNamespace())
                .withName(current.getMetadata().getName())
                .subresource("status")
                .patch(PatchContext.of(PatchType.JSON), body);
        return true;
    }
}
