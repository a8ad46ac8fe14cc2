package io.kvindexer.indexer.ingest;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongConsumer;

/** A replay's target that records the seqs it is given and the ranges reported lost; no live stream bounds it. */
final class RecordingTarget implements ReplayClient.Target {

    final List<Long> taken = new CopyOnWriteArrayList<>();
    /** "from..until: problem" per lost range */
    final List<String> lost = new CopyOnWriteArrayList<>();

    private final LongConsumer onBatch;

    RecordingTarget() {
        this(seq -> {});
    }

    /** @param onBatch runs after each batch is recorded, on the replay's thread (a test can hold the replay there) */
    RecordingTarget(LongConsumer onBatch) {
        this.onBatch = onBatch;
    }

    @Override
    public boolean batch(long seq, byte[] payload) {
        taken.add(seq);
        onBatch.accept(seq);
        return true;
    }

    @Override
    public void lost(long from, long until, String problem) {
        lost.add(from + ".." + until + ": " + problem);
    }

    @Override
    public long liveBound() {
        return ReplayClient.EVERYTHING;
    }
}
