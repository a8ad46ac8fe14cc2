package io.kvindexer.operator.client;

/**
 * How complete a replica's index is for one listener (one engine rank), as its {@code GET /workers} says:
 * {@code exact} (every batch since registration applied or replayed), {@code replaying} (a gap is being replayed) or
 * {@code degraded} (batches are missing that could not be replayed), with the reason and since when (either may be
 * null). An indexer that does not report it gives none (the listener is absent from the map). A listener that is not
 * connected to its engine, with the reason its connection attempts fail ({@code connect_error}), is {@link
 * #NOT_CONNECTED}: whatever its exactness says, the replica hears nothing from that engine.
 */
public record ListenerExactness(String state, String reason, String since) {
    public static final String EXACT = "exact";
    public static final String NOT_CONNECTED = "not connected";

    public boolean exact() {
        return EXACT.equals(state);
    }

    public boolean connected() {
        return !NOT_CONNECTED.equals(state);
    }

    /** {@code degraded (unrecoverable gap) since 2026-...}: what a condition message says of it. */
    public String describe() {
        return state + (reason == null ? "" : " (" + reason + ")") + (since == null ? "" : " since " + since);
    }
}
