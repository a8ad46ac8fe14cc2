package io.kvindexer.operator.client;

/**
 * One (instance, dp rank) registration as POST /register takes it. {@code replayEndpoint} may be null.
 * {@code instanceId} is an unsigned 64-bit pattern. {@code podName} (may be null) is sent as {@code pod_name} so a
 * gateway can map the instance back to its pod; an indexer that does not know the field ignores it.
 */
public record WorkerRegistration(long instanceId, int dpRank, String endpoint, String replayEndpoint, String podName) {

    public WorkerRegistration(long instanceId, int dpRank, String endpoint, String replayEndpoint) {
        this(instanceId, dpRank, endpoint, replayEndpoint, null);
    }

    public WorkerKey key() {
        return new WorkerKey(instanceId, dpRank);
    }

    public String instanceIdText() {
        return Long.toUnsignedString(instanceId);
    }
}
