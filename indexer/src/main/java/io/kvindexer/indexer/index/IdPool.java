package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.ints.IntArrayList;

/**
 * Small int ids naming the rows of a table kept as parallel arrays ({@link WorkerSlots}, {@link OwnerBits}): a
 * released id is reused first (the last released first), else the next new one. The owner keeps the arrays and
 * grows them when a new id equals their length.
 *
 * <p>Not thread-safe: its owner's lock guards it.
 */
final class IdPool {

    private final IntArrayList released = new IntArrayList();
    private int highWater;

    /** Every id handed out is below this value. */
    int highWater() {
        return highWater;
    }

    /** A released id, or else {@link #highWater()} (which then grows by one). */
    int take() {
        return released.isEmpty() ? highWater++ : released.popInt();
    }

    void release(int id) {
        released.add(id);
    }
}
