package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.ingest.BatchSink;
import io.kvindexer.indexer.ingest.Exactness;
import io.kvindexer.indexer.ingest.ListenerSnapshot;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.SequenceWatermark;

/**
 * How the registry starts the ZMQ listener of one registration. Starting never blocks (the engine may not be up);
 * the service wires it to the ingest package's EngineListener.
 */
@FunctionalInterface
public interface ListenerFactory {

    RunningListener start(ListenerSpec spec, SequenceWatermark watermark, BatchSink sink);

    /** A started listener as the registry sees it. */
    interface RunningListener extends AutoCloseable {

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
    }
}
