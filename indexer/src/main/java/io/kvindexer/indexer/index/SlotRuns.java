package io.kvindexer.indexer.index;

/**
 * What a match found, per worker slot ({@link WorkerSlots}): the cumulative run lengths in blocks, device only,
 * then extended through host-pinned, through disk, and through external
 * ({@code device[s] <= host[s] <= disk[s] <= all[s]}). A slot with {@code all[s] == 0} matched nothing.
 */
record SlotRuns(int[] device, int[] host, int[] disk, int[] all) {}
