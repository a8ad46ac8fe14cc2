package io.kvindexer.indexer.registry;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The registry's one wait for the index writers (a removal applied, a worker's pending writes flushed): bounded, so a
 * stuck writer delays an unregister by at most {@link #TIMEOUT_SECONDS} instead of hanging it.
 */
final class WriterWait {

    static final long TIMEOUT_SECONDS = 30;

    private WriterWait() {}

    /**
     * True once {@code writes} completed; false when it failed or took too long (logged as {@code warning}, whose
     * {@code {0}} is {@code subject} and {@code {1}} the cause) or when the thread was interrupted (the flag is kept).
     */
    static boolean done(CompletableFuture<?> writes, System.Logger log, String warning, Object subject) {
        try {
            writes.get(TIMEOUT_SECONDS, TimeUnit.SECONDS);
            return true;
        } catch (ExecutionException | TimeoutException e) {
            log.log(System.Logger.Level.WARNING, warning, subject, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }
}
