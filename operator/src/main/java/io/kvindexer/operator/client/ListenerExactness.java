package io.kvindexer.operator.client;

/**
 * How complete a replica's index is for one listener (one engine rank), as its {@code GET /workers} says:
 * {@code exact} (every batch since registration applied or replayed), {@code replaying} (a gap is being replayed) or
 * {@code degraded} (batches are missing that could not be replayed), with the reason and since when (either may be
 * null). An indexer that does not report it gives none (the listener is absent from the map).
 */
public record ListenerExactness(String state, String reason, String since) {
    public static final String EXACT = "exact";

    public boolean exact() {
        return EXACT.equals(state);
    }

    /** {@code degraded (unrecoverable gap) since 2026-...}: what a condition message says of it. */
    public String describe() {
        return state + (reason == null ? "" : " (" + reason + ")") + (since == null ? "" : " since " + since);
    }
}
