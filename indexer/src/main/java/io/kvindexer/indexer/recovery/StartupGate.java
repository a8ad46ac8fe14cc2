package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.ingest.ReadyGate;
import io.kvindexer.indexer.registry.WorkerRegistry;

import java.util.Map;

/**
 * Startup order and readiness: the listeners' {@link ReadyGate} opens once peer recovery is over and at least
 * {@code DYN_ROUTER_MIN_INITIAL_WORKERS} instances are registered (from {@code --workers} or over HTTP — the port is
 * open from the start). {@link #reason()} gives the {@code /ready} answer in the order of spec §6.4.
 */
public final class StartupGate {

    private static final System.Logger LOG = System.getLogger(StartupGate.class.getName());

    public static final String READY = "ready";
    public static final String RECOVERING = "recovering_from_peer";
    public static final String WAITING_FOR_WORKERS = "waiting_for_min_initial_workers";
    public static final String LISTENERS_FAILED = "listeners_failed";
    public static final String LISTENERS_PENDING = "listeners_pending";

    private final int minInitialWorkers;
    private final ReadyGate readyGate;
    private final WorkerRegistry workers;
    private volatile boolean recovering;

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

    public void recoveryFinished() {
        recovering = false;
        check();
    }

    /** Opens the gate when its conditions hold; idempotent, called on every registry change. */
    public synchronized void check() {
        if (readyGate.isOpen() || recovering) {
            return;
        }
        int registered = workers.instanceCount();
        if (registered >= minInitialWorkers) {
            readyGate.openGate();
            LOG.log(System.Logger.Level.INFO, "startup gate open ({0} worker instances registered, {1} required)",
                    registered, minInitialWorkers);
        }
    }

    /** Recovery done and the min-workers wait over: queries are answered from here on. */
    public boolean isOpen() {
        return readyGate.isOpen();
    }

    public boolean isRecovering() {
        return recovering;
    }

    public int minInitialWorkers() {
        return minInitialWorkers;
    }

    /** The {@code /ready} reason: the first that applies of spec §6.4's list. */
    public String reason() {
        if (recovering) {
            return RECOVERING;
        }
        if (!readyGate.isOpen()) {
            return WAITING_FOR_WORKERS;
        }
        Map<ListenerStatus, Integer> counts = workers.listenerCounts();
        if (counts.get(ListenerStatus.FAILED) > 0) {
            return LISTENERS_FAILED;
        }
        if (counts.get(ListenerStatus.PENDING) > 0) {
            return LISTENERS_PENDING;
        }
        return READY;
    }
}
