package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.KvEvent;
import java.util.List;
import java.util.function.Consumer;

/** Where a listener delivers what it received; in the service, a {@code ModelIndex}. */
public interface BatchSink {

    /** The events of one batch, for the effective (instance, dp rank), in order. */
    void apply(WorkerKey worker, List<KvEvent> events);

    /**
     * Like {@link #apply(WorkerKey, List)}; {@code applied} runs once the events are applied (an asynchronous sink
     * runs it later, on its own thread), so the listeners can bound what waits unapplied. When applying them failed,
     * {@code failed} hears why first: the sink could not vouch for the worker rank's blocks and dropped them all.
     */
    default void apply(WorkerKey worker, List<KvEvent> events, Runnable applied, Consumer<Throwable> failed) {
        apply(worker, events);
        applied.run();
    }

    /** Tokens per block of the index behind this sink; 0 when it has none (a test's recorder). */
    default int blockSize() {
        return 0;
    }

    /** The publisher restarted (seq went back): everything this worker rank held is gone. */
    void publisherRestarted(WorkerKey worker);

    /**
     * Batches of this worker rank's stream are lost for good (no replay endpoint, the engine's buffer no longer
     * holds them, the engine does not answer): its blocks may be wrong, so they must not be claimed. By default
     * the same as a restart: drop them all and let live events rebuild them.
     */
    default void gapUnrecoverable(WorkerKey worker) {
        publisherRestarted(worker);
    }
}
