package io.kvindexer.operator.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.crud.KubernetesCrudDispatcherException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * The CRUD mock API server's dispatcher, answering as the API server does where the mock does not:
 *
 * <ul>
 *   <li>A JSON patch that does not apply to the stored object (it names an array index or a key that is not there)
 *       gets 422 Unprocessable Entity. The mock throws instead and leaves the request open; the client then waits
 *       out its timeout and sends the same patch again, for ever. JOSDK builds such a patch when it removes a
 *       finalizer after a conflict (the diff is taken against the object it read before the conflict) and, told
 *       422, reads the object again.
 *   <li>A PUT on the {@code status} subresource that carries a resource version other than the stored one gets 409
 *       Conflict. The mock checks the version of a PUT of the whole object but writes a status over anything: a
 *       status computed from an object that changed meanwhile (a spec edited while the reconcile ran) would land,
 *       where the API server makes the writer read the object again.
 * </ul>
 *
 * Every write goes through this object's monitor, so the version checked is the one the write replaces.
 */
public class ApiServerDispatcher extends KubernetesCrudDispatcher {
    public ApiServerDispatcher() {
        super(List.of());
    }

    @Override
    public synchronized MockResponse handlePatch(RecordedRequest request) {
        try {
            return super.handlePatch(request);
        } catch (RuntimeException e) {
            return failure(422, "Invalid", "the patch does not apply: " + e.getMessage());
        }
    }

    @Override
    public synchronized MockResponse handleUpdate(RecordedRequest request) {
        String path = request.getPath();
        String bare = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
        if (bare.endsWith("/status")) {
            String stale = staleVersion(path, request.getBody().getBytes());
            if (stale != null) {
                return failure(409, "Conflict", stale);
            }
        }
        return super.handleUpdate(request);
    }

    @Override
    public synchronized MockResponse handleCreate(RecordedRequest request) {
        return super.handleCreate(request);
    }

    @Override
    public synchronized MockResponse handleDelete(String path) {
        return super.handleDelete(path);
    }

    /** The API server's refusal when the body's version is set and is not the stored one's, else null. */
    private String staleVersion(String path, byte[] body) {
        Map.Entry<io.fabric8.mockwebserver.crud.AttributeSet, String> stored = findResource(getKey(path));
        if (stored == null) {
            return null; // the mock answers 404 itself
        }
        try {
            JsonNode sent = asNode(new String(body, StandardCharsets.UTF_8));
            JsonNode current = asNode(stored);
            String version = sent.path("metadata").path("resourceVersion").asText();
            if (version.isEmpty()
                    || version.equals(
                            current.path("metadata").path("resourceVersion").asText())) {
                return null;
            }
            return "Operation cannot be fulfilled on " + current.path("kind").asText() + " \""
                    + current.path("metadata").path("name").asText()
                    + "\": the object has been modified; please apply your changes to the latest version and try"
                    + " again";
        } catch (KubernetesCrudDispatcherException e) {
            return null; // not JSON: the mock answers it itself
        }
    }

    private static MockResponse failure(int code, String reason, String message) {
        Status status = new StatusBuilder()
                .withStatus("Failure")
                .withReason(reason)
                .withCode(code)
                .withMessage(message)
                .build();
        return new MockResponse()
                .setResponseCode(code)
                .setHeader("Content-Type", "application/json")
                .setBody(Serialization.asJson(status));
    }
}
