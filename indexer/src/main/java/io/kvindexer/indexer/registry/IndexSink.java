package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.ingest.BatchSink;
import java.util.List;
import java.util.function.Consumer;

/**
 * Delivers a listener's batches to its index; a publisher restart drops that rank's blocks, and so does a batch the
 * index failed to apply. Public so that whatever
 * else wires a listener straight to an index (tests, benchmarks) uses the same delivery as the registry.
 */
public record IndexSink(ModelIndex index) implements BatchSink {
    @Override
    public void apply(WorkerKey worker, List<KvEvent> events) {
        index.submit(worker, events);
    }

    @Override
    public void apply(WorkerKey worker, List<KvEvent> events, Runnable applied, Consumer<Throwable> failed) {
        index.submit(worker, events, applied, failed);
    }

    @Override
    public int blockSize() {
        return index.blockSize();
    }

    @Override
    public void publisherRestarted(WorkerKey worker) {
        index.removeWorker(worker);
    }
}
