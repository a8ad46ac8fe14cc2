package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.common.MetricLabel;
import java.time.Instant;

/**
 * What {@code /workers} shows for one listener.
 *
 * @param lastError         null when none; while the engine connection is down it says so
 * @param connected         the SUB connection to the engine is up (its ZMTP handshake completed); false before the
 *                          first handshake, while down, and when paused or failed (no socket)
 * @param disconnectedSince when an up connection was lost and not yet made again; null otherwise
 * @param exactness         how complete the index is for this stream ({@link Exactness}); null when not tracked
 * @param connectError      while not connected: why the last connection attempt failed (refused, a handshake the
 *                          peer broke off, ...); null when connected, or before an attempt failed
 */
public record ListenerSnapshot(
        String endpoint,
        ListenerStatus status,
        String lastError,
        boolean connected,
        Instant disconnectedSince,
        Exactness.Reading exactness,
        String connectError) {

    /** A listener whose exactness nobody tracks (a stand-in), with no failed connection attempt. */
    public ListenerSnapshot(
            String endpoint, ListenerStatus status, String lastError, boolean connected, Instant disconnectedSince) {
        this(endpoint, status, lastError, connected, disconnectedSince, null, null);
    }

    /** A listener's engine connection: up, lost (it was up), or never up yet; what /ready and a gauge sort by. */
    public enum Connection implements MetricLabel {
        CONNECTED,
        DISCONNECTED,
        NOT_CONNECTED
    }

    /** The engine connection is down: it was up and went away. */
    public boolean disconnected() {
        return disconnectedSince != null;
    }

    /** Its {@link Connection}; a paused or failed listener has no socket: not connected. */
    public Connection connection() {
        return connected ? Connection.CONNECTED : disconnected() ? Connection.DISCONNECTED : Connection.NOT_CONNECTED;
    }

    /**
     * A running listener's view: a lost connection is the error shown until it comes back. A listener reads from the
     * ready gate on, but shows {@code active} only once its first connection is up, as Dynamo documents ("pending
     * until the initial connect succeeds"; its libzmq connect never waits, so its code shows active at once). A
     * connection lost later keeps {@code active}: the SUB socket reconnects by itself.
     */
    static ListenerSnapshot of(
            String endpoint,
            ListenerStatus status,
            String recordedError,
            EngineLink.State link,
            Exactness.Reading exactness) {
        String error = link.downSince() == null
                ? recordedError
                : "engine connection lost at " + link.downSince() + "; reconnecting (events are missed meanwhile)";
        boolean neverUp = !link.connected() && link.downSince() == null;
        ListenerStatus shown = status == ListenerStatus.ACTIVE && neverUp ? ListenerStatus.PENDING : status;
        return new ListenerSnapshot(
                endpoint, shown, error, link.connected(), link.downSince(), exactness, link.attemptProblem());
    }
}
