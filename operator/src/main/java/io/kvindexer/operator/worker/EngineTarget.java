package io.kvindexer.operator.worker;

import io.kvindexer.operator.client.WorkerRegistration;
import java.util.List;

/**
 * A Ready engine pod and the registrations it should have on every replica (one per dp rank); {@code uid} is the
 * pod's {@code metadata.uid} (null when not known).
 */
public record EngineTarget(String pod, long instanceId, List<WorkerRegistration> registrations, String uid) {

    public EngineTarget(String pod, long instanceId, List<WorkerRegistration> registrations) {
        this(pod, instanceId, registrations, null);
    }

    public String endpoint() {
        return registrations.getFirst().endpoint();
    }

    public String replayEndpoint() {
        return registrations.getFirst().replayEndpoint();
    }
}
