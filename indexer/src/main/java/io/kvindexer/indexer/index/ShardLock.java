package io.kvindexer.indexer.index;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The locks of one {@link PrefixIndex} shard. A writer holds both; a query ({@link PrefixIndex#findMatches}) takes
 * only {@link #steps}' read lock, every other reader (dumps, surveys, cross-shard reads) only {@link #whole}'s.
 * Between two steps of a write ({@link #letQueriesIn}) the writer drops {@link #steps} when a query waits for it,
 * so a query waits for one block of a write, not for a batch (docs/adr/0001-prefix-index.md, "Eleventh round").
 * The writer keeps {@link #whole} meanwhile: writers stay serialised, and only queries ever see a write paused, at
 * the points where {@link PrefixIndex}'s writes make that safe.
 *
 * <p>A query that finds {@link #steps} write-locked, or a writer waiting for it, says so in {@link #queriesWaiting}
 * and spins (a step is well under a microsecond) up to {@value #SPIN_NANOS} ns, then parks as a plain read lock does
 * (a writer preempted while holding the lock); the writer that then gets the lock lets it in at its first pause. A
 * paused writer spins up to as long for the waiting queries to get in, then takes the lock back, queueing behind
 * those that got in (new queries queue behind a queued writer): it is never starved.
 */
final class ShardLock {

    /** how long a waiting query or a paused writer spins before it parks */
    private static final long SPIN_NANOS = 50_000;

    private final ReentrantReadWriteLock whole = new ReentrantReadWriteLock();
    private final ReentrantReadWriteLock steps = new ReentrantReadWriteLock();
    private final AtomicInteger queriesWaiting = new AtomicInteger();

    void lockQuery() {
        // Taken at once only when no writer holds the lock or waits for it: a plain lock() also parks behind a writer
        // that waits, and a query parked there, not counted, would wait out the writer's whole batch.
        if (!steps.isWriteLocked()
                && !steps.hasQueuedThreads()
                && steps.readLock().tryLock()) {
            return;
        }
        queriesWaiting.incrementAndGet();
        try {
            long deadline = System.nanoTime() + SPIN_NANOS;
            while (steps.isWriteLocked() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            steps.readLock().lock();
        } finally {
            queriesWaiting.decrementAndGet();
        }
    }

    void unlockQuery() {
        steps.readLock().unlock();
    }

    void lockRead() {
        whole.readLock().lock();
    }

    void unlockRead() {
        whole.readLock().unlock();
    }

    void lockWrite() {
        whole.writeLock().lock();
        steps.writeLock().lock();
    }

    void unlockWrite() {
        steps.writeLock().unlock();
        whole.writeLock().unlock();
    }

    /**
     * Called by the writer between two steps of a write, where a query may see the index: when a query waits, lets
     * it in and takes the lock back after it. No writer and no other reader can come in meanwhile.
     */
    void letQueriesIn() {
        if (queriesWaiting.get() == 0) {
            return;
        }
        steps.writeLock().unlock();
        long deadline = System.nanoTime() + SPIN_NANOS;
        while (queriesWaiting.get() > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        while (!steps.writeLock().tryLock()) {
            if (System.nanoTime() >= deadline) {
                steps.writeLock().lock();
                return;
            }
            Thread.onSpinWait();
        }
    }
}
