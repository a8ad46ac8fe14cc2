package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.HashCommon;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * The writer thread pool shared by all indexes ({@code --threads}). A task is always run on the thread chosen by
 * its sticky key, so the events of one worker are applied in order and never by two threads at once.
 *
 * <p>N single-thread executors rather than one pool: per-key order comes for free, and a barrier is one no-op
 * task per thread (each thread runs its queue in order).
 */
public final class IndexWriters implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(IndexWriters.class.getName());

    private final ExecutorService[] threads;
    /** tasks that threw: a bug in the index, counted so that tests and dashboards see it, not only the log */
    private final LongAdder failures = new LongAdder();

    public IndexWriters(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("writer threads must be >= 1, got " + threads);
        }
        this.threads = new ExecutorService[threads];
        for (int i = 0; i < threads; i++) {
            String name = "index-writer-" + i;
            this.threads[i] = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, name);
                t.setDaemon(true);
                return t;
            });
        }
    }

    public void execute(long stickyKey, Runnable task) {
        executeOn(threadOf(stickyKey), task);
    }

    /** Runs the task on writer thread {@code thread} (0 ≤ thread < {@link #size()}), after its earlier tasks. */
    void executeOn(int threadIndex, Runnable task) {
        ExecutorService thread = threads[threadIndex];
        try {
            thread.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException | Error e) {
                    // one bad task must not stop the worker's later events (a worker's failed write has had its
                    // blocks dropped by ModelIndex first, so what it half applied is not claimed)
                    failures.increment();
                    LOG.log(System.Logger.Level.WARNING, "index write failed", e);
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.log(System.Logger.Level.DEBUG, "index write dropped: writers are closed");
        }
    }

    /** Completes when every task submitted to any thread before this call has run. */
    public CompletableFuture<Void> barrier() {
        CompletableFuture<?>[] all = new CompletableFuture<?>[threads.length];
        for (int i = 0; i < threads.length; i++) {
            try {
                all[i] = CompletableFuture.runAsync(() -> {}, threads[i]);
            } catch (RejectedExecutionException e) {
                all[i] = CompletableFuture.completedFuture(null);
            }
        }
        return CompletableFuture.allOf(all);
    }

    /** How many tasks threw since the writers started. */
    public long failures() {
        return failures.sum();
    }

    /** How many writer threads (an index has at most this many shards). */
    int size() {
        return threads.length;
    }

    int threadOf(long stickyKey) {
        return (int) Math.floorMod(HashCommon.mix(stickyKey), (long) threads.length);
    }

    @Override
    public void close() {
        for (ExecutorService t : threads) {
            t.shutdown();
        }
        for (ExecutorService t : threads) {
            try {
                if (!t.awaitTermination(10, TimeUnit.SECONDS)) {
                    t.shutdownNow();
                }
            } catch (InterruptedException e) {
                t.shutdownNow();
                Thread.currentThread().interrupt();
            }
        }
    }
}
