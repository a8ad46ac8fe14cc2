package io.kvindexer.indexer.index;

import java.util.concurrent.CompletableFuture;

/**
 * The writer thread pool shared by all indexes ({@code --threads}). A task is always run on the thread chosen by
 * its sticky key, so the events of one worker are applied in order and never by two threads at once.
 *
 * <p>CONTRACT STUB: bodies come with the core index.
 */
public final class IndexWriters implements AutoCloseable {

    public IndexWriters(int threads) {
        throw new UnsupportedOperationException("core index");
    }

    public void execute(long stickyKey, Runnable task) {
        throw new UnsupportedOperationException("core index");
    }

    /** Completes when every task submitted to any thread before this call has run. */
    public CompletableFuture<Void> barrier() {
        throw new UnsupportedOperationException("core index");
    }

    @Override
    public void close() {
        throw new UnsupportedOperationException("core index");
    }
}
