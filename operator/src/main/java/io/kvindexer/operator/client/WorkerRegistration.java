package io.kvindexer.operator.client;

/**
 * One (instance, dp rank) registration as POST /register takes it. {@code replayEndpoint} may be null.
 * {@code instanceId} is an unsigned 64-bit pattern.
 */
public record WorkerRegistration(long instanceId, int dpRank, String endpoint, String replayEndpoint) {

    public WorkerKey key() {
        return new WorkerKey(instanceId, dpRank);
    }

    public String instanceIdText() {
        return Long.toUnsignedString(instanceId);
    }
}
