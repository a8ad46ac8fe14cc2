package io.kvindexer.indexer.ingest;

import java.time.Instant;
import java.util.function.LongSupplier;

/**
 * Whether one listener attempt's SUB connection to its engine is up, as the {@link Subscriber} tells (it reconnects
 * by itself, so nothing else would). It outlives each connection: the engine counts as down from the disconnect
 * until a new connection completes its ZMTP handshake. Fed on the poller thread, read by {@code /workers}.
 */
final class EngineLink {

    /**
     * What the link says at one moment; {@code downSince} is null unless an up connection was lost; {@code
     * attemptProblem} is why the last connection attempt failed, null while connected or before any failed.
     */
    record State(boolean connected, Instant downSince, String attemptProblem) {
        static final State NONE = new State(false, null, null);
    }

    private final LongSupplier wallMillis;
    private final Runnable onLost;
    private final Runnable onBack;
    private boolean up;
    private long downSinceMillis;
    private String attemptProblem;

    /**
     * @param onLost run once per loss of an up connection (counted and logged by the owner)
     * @param onBack run when a connection handshakes after a loss
     */
    EngineLink(LongSupplier wallMillis, Runnable onLost, Runnable onBack) {
        this.wallMillis = wallMillis;
        this.onLost = onLost;
        this.onBack = onBack;
    }

    void handshaken() {
        boolean back;
        synchronized (this) {
            back = downSinceMillis != 0;
        }
        if (back) {
            // before the link shows up: whoever sees it connected again also sees what the return set off (a
            // listener without a replay endpoint is not exact from then on until the engine's next batch)
            onBack.run();
        }
        synchronized (this) {
            up = true;
            downSinceMillis = 0;
            attemptProblem = null;
        }
    }

    /** A connection closed; only the loss of an up one is a disconnect (a connect that never handshook is not). */
    void disconnected() {
        synchronized (this) {
            if (!up) {
                return;
            }
            up = false;
            long now = wallMillis.getAsLong();
            downSinceMillis = now == 0 ? 1 : now;
        }
        onLost.run();
    }

    /** A connection attempt failed (refused, no route, a handshake the peer broke off): what the owner shows. */
    synchronized void attemptFailed(String problem) {
        attemptProblem = problem;
    }

    synchronized State state() {
        return new State(
                up, downSinceMillis == 0 ? null : Instant.ofEpochMilli(downSinceMillis), up ? null : attemptProblem);
    }

    /** A listener's link: a loss is counted and logged, and so is the return, which {@code back} hears of too. */
    static EngineLink of(String endpoint, IngestMetrics metrics, ListenerLog log, Runnable back) {
        return new EngineLink(
                System::currentTimeMillis,
                () -> {
                    metrics.engineDisconnected();
                    log.warn("connection to " + endpoint + " lost; the SUB socket reconnects by itself");
                },
                () -> {
                    log.info("connection to " + endpoint + " is back; catching up on what it published meanwhile");
                    back.run();
                });
    }
}
