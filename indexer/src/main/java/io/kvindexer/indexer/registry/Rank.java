package io.kvindexer.indexer.registry;

import io.kvindexer.indexer.ingest.Exactness;
import io.kvindexer.indexer.ingest.ListenerSnapshot;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.RunningListener;
import io.kvindexer.indexer.ingest.SequenceWatermark;

/** One (instance, dp rank): its spec and its running listener (which holds the registry's watermark). */
final class Rank {

    private static final System.Logger LOG = System.getLogger(Rank.class.getName());

    final ListenerSpec spec;
    final RunningListener listener;
    final Exactness exactness;
    final SequenceWatermark watermark;

    Rank(ListenerSpec spec, RunningListener listener, SequenceWatermark watermark) {
        this.spec = spec;
        this.listener = listener;
        this.exactness = listener.exactness();
        this.watermark = watermark;
    }

    /**
     * Stops the listener; false when its stream did not close within the listener's wait (a replay holds it, and may
     * still apply a batch: {@link RunningListener#closed} says when it has closed).
     */
    boolean stop() {
        try {
            return listener.stop();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "closing listener " + spec + " failed", e);
            return true; // (nothing to wait for that would ever say more)
        }
    }

    ListenerSnapshot snapshot() {
        return listener.snapshot();
    }
}
