package io.kvindexer.indexer.http;

import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A few arrays for request bodies read whole, handed from one request to the next. A fresh array per body is
 * zeroed by the JVM and then filled: two passes over tens of kilobytes of memory no cache holds yet, per query. The
 * pool is small and bounded (a body that finds no free array gets a new one, an array beyond the size cap or
 * without a free slot is left to the GC), so idle connections hold nothing.
 */
final class BodyBuffers {

    private static final int SLOTS = 16;
    private static final int MAX_POOLED_BYTES = 1 << 20;
    private static final AtomicReferenceArray<byte[]> FREE = new AtomicReferenceArray<>(SLOTS);

    private BodyBuffers() {}

    /** An array of at least {@code size} bytes, its contents undefined. */
    static byte[] take(int size) {
        if (size <= MAX_POOLED_BYTES) {
            for (int i = 0; i < SLOTS; i++) {
                byte[] b = FREE.get(i);
                if (b != null && b.length >= size && FREE.compareAndSet(i, b, null)) {
                    return b;
                }
            }
        }
        return new byte[size];
    }

    /** Gives back an array no one reads any more. */
    static void give(byte[] b) {
        if (b.length > MAX_POOLED_BYTES) {
            return;
        }
        for (int i = 0; i < SLOTS; i++) {
            if (FREE.get(i) == null && FREE.compareAndSet(i, null, b)) {
                return;
            }
        }
    }
}
