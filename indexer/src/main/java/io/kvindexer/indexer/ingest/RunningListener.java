package io.kvindexer.indexer.ingest;

import java.util.concurrent.CompletableFuture;

/**
 * A started listener of one registration, as the registry controls it: {@link EngineListener} in the service, a
 * stand-in in tests.
 */
public interface RunningListener extends AutoCloseable {

    ListenerSnapshot snapshot();

    /** How complete the index is for this stream, read by every query; a stand-in's is always exact. */
    default Exactness exactness() {
        return Exactness.untracked();
    }

    /** pending/active → paused: the sockets are dropped, the watermark kept; false from another status. */
    boolean pause();

    /** paused/failed → pending: a new attempt with the same watermark; false from another status. */
    boolean resume();

    /** Stops receiving and releases the sockets; the watermark is kept by the registry. */
    @Override
    void close();

    /**
     * Like {@link #close}, and says whether the listener's stream has closed within the bounded wait: false when it
     * has not (it logged why), and then it may still apply a batch, so a listener of the same stream must not start
     * beside it yet.
     */
    default boolean stop() {
        close();
        return true;
    }

    /**
     * Completes once the listener's stream has closed after {@link #stop} (at once when the stop said it had; for a
     * stop that ran out its wait, when the replay that held it ends), on a thread of the listener's: a caller that
     * does more than note it goes async.
     */
    default CompletableFuture<Void> closed() {
        return CompletableFuture.completedFuture(null);
    }
}
