package io.kvindexer.indexer.ingest;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The last applied sequence number of one registration (u64; {@link #UNSET} = 2^64-1 before the first batch).
 * Owned by the registry, not the listener, so it survives unregister/register (compatibility.md, Where we differ on purpose).
 *
 * <p>The watermark passes a batch when it is handed to the index. When the index's writer has applied it, the
 * {@link #onApplied hook}, if one is set, is told: a lag measured there needs no observer that runs barriers through
 * the writer's queue (the fleet bench's lag).
 */
public final class SequenceWatermark {

    public static final long UNSET = -1L;

    /** Told on the writer thread, right after the index applied batch {@code seq}, at {@code nanos} (nanoTime). */
    @FunctionalInterface
    public interface AppliedHook {
        void applied(long seq, long nanos);
    }

    private final AtomicLong last = new AtomicLong(UNSET);
    private volatile AppliedHook hook;

    public long get() {
        return last.get();
    }

    public void set(long seq) {
        last.set(seq);
    }

    public void reset() {
        last.set(UNSET);
    }

    /** From now on {@code hook} (null: none) is told of every batch of this registration the index applies. */
    public void onApplied(AppliedHook hook) {
        this.hook = hook;
    }

    /** On the writer thread, once batch {@code seq} is applied (one writer per worker: in seq order). */
    void applied(long seq) {
        AppliedHook h = hook;
        if (h != null) {
            h.applied(seq, System.nanoTime());
        }
    }
}
