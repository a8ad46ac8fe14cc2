package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.model.WorkerKey;

import java.util.List;

/** Where a listener delivers what it received; in the service, a {@code ModelIndex}. */
public interface BatchSink {

    /** The events of one batch, for the effective (instance, dp rank), in order. */
    void apply(WorkerKey worker, List<KvEvent> events);

    /** The publisher restarted (seq went back): everything this worker rank held is gone. */
    void publisherRestarted(WorkerKey worker);
}
