package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.sim.EngineSimulator;

/** How many replay requests an engine stand-in received, allowing for the copies a handshake retry can leave. */
final class ReplayRequests {

    private ReplayRequests() {}

    /**
     * The engine received {@code asked} replay requests, and at most one more for each handshake retry. A retry sends
     * its request again on a fresh DEALER; on a loaded machine the old DEALER can still deliver its copy before it
     * closes (its handshake was slow, not stalled, or jeromq's own handshake deadline reconnected it first).
     */
    static void assertAsked(EngineSimulator sim, CountingMetrics metrics, int asked, String what) {
        assertThat(sim.replays().requests())
                .as(what + " (" + sim.replays() + ", " + metrics + ")")
                .isBetween(asked, asked + (int) metrics.get("handshake.retries"));
    }
}
