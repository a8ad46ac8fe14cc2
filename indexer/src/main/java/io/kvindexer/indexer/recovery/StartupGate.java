package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.ingest.ReadyGate;
import io.kvindexer.indexer.registry.WorkerRegistry;

/**
 * Startup order and readiness: the listeners' {@link ReadyGate} opens once peer recovery is over and at least
 * {@code DYN_ROUTER_MIN_INITIAL_WORKERS} instances are registered (from {@code --workers} or over HTTP — the port is
 * open from the start). Once open it stays open: readiness means "answers queries from a complete index", so a
 * listener that fails or is still connecting later never takes the replica out of rotation (it shows in
 * {@code /workers}, {@code /metrics} and the body of {@code /ready} instead). Only a coming stop
 * ({@link #shuttingDown}) turns {@code /ready} to 503 again, while the gate stays open for queries.
 */
public final class StartupGate {

    private static final System.Logger LOG = System.getLogger(StartupGate.class.getName());

    public static final String READY = "ready";
    public static final String RECOVERING = "recovering_from_peer";
    public static final String WAITING_FOR_WORKERS = "waiting_for_min_initial_workers";
    public static final String SHUTTING_DOWN = "shutting_down";

    private final int minInitialWorkers;
    private final ReadyGate readyGate;
    private final WorkerRegistry workers;
    private volatile boolean recovering;
    /** recovery brought nothing (or none was configured): what the index holds it saw itself, since its start */
    private volatile boolean startedBlank = true;

    private volatile boolean shuttingDown;
    /** recovering, and a snapshot on disk to fall back on: this replica will have state whatever its peers say */
    private volatile boolean snapshotToFallBackOn;

    /**
     * @param recoveryPending true when peers are configured: the gate stays shut until {@link #recoveryFinished()}
     */
    public StartupGate(int minInitialWorkers, boolean recoveryPending, ReadyGate readyGate, WorkerRegistry workers) {
        this.minInitialWorkers = minInitialWorkers;
        this.recovering = recoveryPending;
        this.readyGate = readyGate;
        this.workers = workers;
        workers.onChange(this::check);
    }

    /** Recovery is over and brought nothing (or nothing but a blank peer's registrations). */
    public void recoveryFinished() {
        recoveryFinished(false);
    }

    /** Recovery is over; {@code broughtState}: it installed a snapshot or a peer's state that was not blank. */
    public void recoveryFinished(boolean broughtState) {
        startedBlank = !broughtState;
        recovering = false;
        check();
    }

    /** Nothing was recovered at start: with no block stored and nothing unregistered since, the replica is blank. */
    public boolean startedBlank() {
        return startedBlank;
    }

    /** Opens the gate when its conditions hold; idempotent, called on every registry change. */
    public synchronized void check() {
        if (readyGate.isOpen() || recovering) {
            return;
        }
        int registered = workers.instanceCount();
        if (registered >= minInitialWorkers) {
            readyGate.openGate();
            LOG.log(
                    System.Logger.Level.INFO,
                    "startup gate open ({0} worker instances registered, {1} required)",
                    registered,
                    minInitialWorkers);
        }
    }

    /** Recovery done and the min-workers wait over: queries are answered from here on. */
    public boolean isOpen() {
        return readyGate.isOpen();
    }

    public boolean isRecovering() {
        return recovering;
    }

    /** Startup recovery has a snapshot to fall back on: its {@code /dump} tells peers to ask again. */
    public void snapshotToFallBackOn() {
        snapshotToFallBackOn = true;
    }

    /**
     * Still recovering, with a snapshot on disk: it will have the state even when no peer answers, so a peer without
     * a snapshot of its own should wait for it rather than start empty.
     */
    public boolean recoveringWithSnapshot() {
        return recovering && snapshotToFallBackOn;
    }

    /**
     * A stop is coming ({@code --shutdown-delay}): {@code /ready} answers 503 from now on, so that load balancers take
     * the replica out, while queries are still answered from the index as before.
     */
    public void shuttingDown() {
        shuttingDown = true;
    }

    public boolean isShuttingDown() {
        return shuttingDown;
    }

    /**
     * The {@code /ready} reason: {@link #SHUTTING_DOWN} once a stop is coming, {@link #READY} once open, else what
     * the gate still waits for (recovery first).
     */
    public String reason() {
        if (shuttingDown) {
            return SHUTTING_DOWN;
        }
        if (recovering) {
            return RECOVERING;
        }
        return readyGate.isOpen() ? READY : WAITING_FOR_WORKERS;
    }
}
