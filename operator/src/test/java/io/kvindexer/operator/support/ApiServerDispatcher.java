package io.kvindexer.operator.support;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.List;

/**
 * The CRUD mock API server's dispatcher, answering as the API server does where the mock would not answer at all: a
 * JSON patch that does not apply to the stored object (it names an array index or a key that is not there) gets 422
 * Unprocessable Entity. The mock throws instead and leaves the request open; the client then waits out its timeout
 * and sends the same patch again, for ever. JOSDK builds such a patch when it removes a finalizer after a conflict
 * (the diff is taken against the object it read before the conflict) and, told 422, reads the object again.
 */
public class ApiServerDispatcher extends KubernetesCrudDispatcher {
    public ApiServerDispatcher() {
        super(List.of());
    }

    @Override
    public MockResponse handlePatch(RecordedRequest request) {
        try {
            return super.handlePatch(request);
        } catch (RuntimeException e) {
            Status status = new StatusBuilder()
                    .withStatus("Failure")
                    .withReason("Invalid")
                    .withCode(422)
                    .withMessage("the patch does not apply: " + e.getMessage())
                    .build();
            return new MockResponse()
                    .setResponseCode(422)
                    .setHeader("Content-Type", "application/json")
                    .setBody(Serialization.asJson(status));
        }
    }
}
