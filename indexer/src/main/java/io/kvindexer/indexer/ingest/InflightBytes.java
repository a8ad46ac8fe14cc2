package io.kvindexer.indexer.ingest;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The bytes of batches read from ZeroMQ and handed to the index that the index has not applied yet, against a
 * process-wide budget ({@code --ingest-queue-bytes}). While the budget is used up the pollers stop reading, so a slow
 * index writer backs up into ZeroMQ's bounded queues (and from there into gaps and replays), never into the heap.
 * Each poller thread, and each replay thread, lets one batch through when below the budget, however large, so
 * progress never stops and the budget is overshot by at most one batch per such thread.
 */
public final class InflightBytes {

    /** The default budget: an eighth of the heap, at least 16 MiB. */
    public static long defaultBudget() {
        return Math.max(16L << 20, Runtime.getRuntime().maxMemory() / 8);
    }

    /** How often a waiting replay looks at the budget again: a writer applies a batch in well under this. */
    private static final long ROOM_POLL_NANOS = 1_000_000L;

    private final long budget;
    private final AtomicLong used = new AtomicLong();

    public InflightBytes(long budget) {
        if (budget < 1) {
            throw new IllegalArgumentException("the ingest queue budget must be at least one byte, got " + budget);
        }
        this.budget = budget;
    }

    public long budget() {
        return budget;
    }

    /** Bytes handed to the index and not yet applied. */
    public long used() {
        return used.get();
    }

    boolean hasRoom() {
        return used.get() < budget;
    }

    /**
     * Waits (a replay thread) until there is room or {@code stop} says to give up: a replay's batches wait for the
     * budget as the pollers' reads do, and what the engine sends meanwhile waits in the replay's DEALER queue or is
     * dropped by the engine's ROUTER, which the replay asks for again.
     */
    void awaitRoom(BooleanSupplier stop) {
        while (!hasRoom() && !stop.getAsBoolean() && !Thread.currentThread().isInterrupted()) {
            LockSupport.parkNanos(ROOM_POLL_NANOS);
        }
    }

    void taken(long bytes) {
        used.addAndGet(bytes);
    }

    void released(long bytes) {
        used.addAndGet(-bytes);
    }
}
