package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.ingest.BatchSink;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.RunningListener;
import io.kvindexer.indexer.ingest.SequenceWatermark;

/**
 * How the registry starts the ZMQ listener of one registration. Starting never blocks (the engine may not be up);
 * the service wires it to the ingest package's EngineListener.
 */
@FunctionalInterface
public interface ListenerFactory {

    RunningListener start(ListenerSpec spec, SequenceWatermark watermark, BatchSink sink);
}
