package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.WorkerRegistration;
import java.util.List;

/** A Ready engine pod and the registrations it should have on every replica (one per dp rank). */
public record EngineTarget(String pod, long instanceId, List<WorkerRegistration> registrations) {

    public String endpoint() {
        return registrations.getFirst().endpoint();
    }

    public String replayEndpoint() {
        return registrations.getFirst().replayEndpoint();
    }
}
