package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.KvEvent;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * A sink in front of {@code target} that holds a batch when {@code hold} says so (asked once per batch): it counts
 * {@code entered} down, waits for {@code release}, then hands the batch on. An index writer stuck in one write, for
 * the tests of streams that outlive their stop.
 */
public record HeldSink(BatchSink target, BooleanSupplier hold, CountDownLatch entered, CountDownLatch release)
        implements BatchSink {

    /** Holds the first batch only (while {@code entered} has not been counted down). */
    public static HeldSink first(BatchSink target, CountDownLatch entered, CountDownLatch release) {
        return new HeldSink(target, () -> entered.getCount() > 0, entered, release);
    }

    @Override
    public void apply(WorkerKey worker, List<KvEvent> events) {
        apply(worker, events, () -> {}, failure -> {});
    }

    @Override
    public void apply(WorkerKey worker, List<KvEvent> events, Runnable applied, Consumer<Throwable> failed) {
        if (hold.getAsBoolean()) {
            entered.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        target.apply(worker, events, applied, failed);
    }

    @Override
    public int blockSize() {
        return target.blockSize();
    }

    @Override
    public void publisherRestarted(WorkerKey worker) {
        target.publisherRestarted(worker);
    }

    @Override
    public void gapUnrecoverable(WorkerKey worker) {
        target.gapUnrecoverable(worker);
    }
}
