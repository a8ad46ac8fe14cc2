package io.kvindexer.indexer.index;

/**
 * What a match found, per worker slot ({@link WorkerSlots}): the cumulative run lengths in blocks, device only,
 * then extended through host-pinned, then through disk and external ({@code device[s] <= host[s] <= disk[s]}).
 * A slot with {@code disk[s] == 0} matched nothing.
 */
record SlotRuns(int[] device, int[] host, int[] disk) {
}
