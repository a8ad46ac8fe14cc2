package io.kvindexer.indexer.ingest;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * How many replays may run at once in this process ({@code --max-concurrent-replays}). A replay reads a whole
 * engine buffer and applies it; after an indexer restart every listener may want one at the same moment, and
 * unbounded they would starve the live streams of the CPU.
 */
public final class ReplayPermits {

    public static final int DEFAULT = 8;

    private static final ReplayPermits SHARED = new ReplayPermits(DEFAULT);

    private final Semaphore permits;
    private final int limit;

    public ReplayPermits(int limit) {
        if (limit < 1) {
            throw new IllegalArgumentException("at least one concurrent replay, got " + limit);
        }
        this.limit = limit;
        this.permits = new Semaphore(limit, true);
    }

    /** The default limit, shared by every listener made with {@code ListenerOptions.defaults()}. */
    public static ReplayPermits shared() {
        return SHARED;
    }

    public int limit() {
        return limit;
    }

    /** Replays running now. */
    public int inUse() {
        return limit - permits.availablePermits();
    }

    /** Replays waiting for a permit now (an estimate, as {@link Semaphore#getQueueLength} is). */
    public int waiting() {
        return permits.getQueueLength();
    }

    /** Waits for a permit, looking at {@code giveUp} every 100 ms; false when it says so first. */
    boolean acquire(BooleanSupplier giveUp) throws InterruptedException {
        while (!giveUp.getAsBoolean()) {
            if (permits.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                return true;
            }
        }
        return false;
    }

    void release() {
        permits.release();
    }
}
