package io.kvindexer.indexer.ingest;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The last applied sequence number of one registration (u64; {@link #UNSET} = 2^64-1 before the first batch).
 * Owned by the registry, not the listener, so it survives unregister/register (compatibility.md, Where we differ on purpose).
 */
public final class SequenceWatermark {

    public static final long UNSET = -1L;

    private final AtomicLong last = new AtomicLong(UNSET);

    public long get() {
        return last.get();
    }

    public void set(long seq) {
        last.set(seq);
    }

    public void reset() {
        last.set(UNSET);
    }
}
