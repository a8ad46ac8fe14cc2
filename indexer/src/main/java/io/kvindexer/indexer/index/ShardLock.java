package io.kvindexer.indexer.index;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The lock of one {@link PrefixIndex} shard: readers share it, a writer excludes them, and a writer can let waiting
 * readers in between the steps of one event without letting another writer in (docs/adr/0001-prefix-index.md,
 * "Fifth round").
 *
 * <p>A lookup takes a few microseconds and a store of a long chain tens, so a reader that parks behind a writer pays
 * the rest of the write and then a thread wake-up. Here a reader that finds the write lock held spins (up to
 * {@value #SPIN_NANOS} ns, then parks as before) and says so in {@link #readersWaiting}; the writer checks that count
 * at each step it may pause at ({@link #letReadersIn}) and, when a reader waits, drops the read-write lock until the
 * reader has it. Writers stay serialised by {@link #writing}, which a pause keeps, so between two steps of a write
 * only readers run: what they may see there is the writer's business (see {@link PrefixIndex#store}).
 */
final class ShardLock {

    /** how long a reader or a paused writer spins before it parks */
    private static final long SPIN_NANOS = 50_000;

    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final ReentrantLock writing = new ReentrantLock();
    private final AtomicInteger readersWaiting = new AtomicInteger();

    void lockRead() {
        if (!lock.isWriteLocked()) {
            lock.readLock().lock();
            return;
        }
        readersWaiting.incrementAndGet();
        try {
            long deadline = System.nanoTime() + SPIN_NANOS;
            while (lock.isWriteLocked() && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            lock.readLock().lock();
        } finally {
            readersWaiting.decrementAndGet();
        }
    }

    void unlockRead() {
        lock.readLock().unlock();
    }

    void lockWrite() {
        writing.lock();
        lock.writeLock().lock();
    }

    void unlockWrite() {
        lock.writeLock().unlock();
        writing.unlock();
    }

    /**
     * Called by the writer between two steps of a write, where the index is consistent: when a reader waits, lets it
     * in and takes the write lock back after it. Another writer cannot come in between.
     */
    void letReadersIn() {
        if (readersWaiting.get() == 0) {
            return;
        }
        lock.writeLock().unlock();
        long deadline = System.nanoTime() + SPIN_NANOS;
        while (readersWaiting.get() > 0 && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        while (!lock.writeLock().tryLock()) {
            if (System.nanoTime() >= deadline) {
                lock.writeLock().lock();
                return;
            }
            Thread.onSpinWait();
        }
    }
}
