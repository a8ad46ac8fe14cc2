package io.kvindexer.indexer.index;

import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.event.RouterEvent;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The prefix index of one (model, tenant) with its fixed block size: the single entry point the rest of the
 * service uses (listeners write, HTTP reads). Thread-safe. Writes are asynchronous and ordered per worker
 * (sticky to one writer thread); {@link #flush()} is the barrier that makes them visible to a following read.
 *
 * <p>CONTRACT STUB: signatures agreed between the core, ingest and HTTP work; bodies come with the core index.
 */
public final class ModelIndex {

    public ModelIndex(String modelName, String tenantId, int blockSize, IndexOptions options, IndexWriters writers) {
        throw new UnsupportedOperationException("core index");
    }

    public String modelName() {
        throw new UnsupportedOperationException("core index");
    }

    public String tenantId() {
        throw new UnsupportedOperationException("core index");
    }

    public int blockSize() {
        throw new UnsupportedOperationException("core index");
    }

    /**
     * Enqueues a batch's events for one worker, in order. Token hashing happens on the calling thread (the
     * listener's), not under the index lock. Never throws for bad events: they are counted by status.
     */
    public void submit(WorkerKey worker, List<KvEvent> events) {
        throw new UnsupportedOperationException("core index");
    }

    /** Enqueues RouterEvents from a peer's dump (recovery): device stores do not require the parent. */
    public void submitRecovered(List<RouterEvent> events) {
        throw new UnsupportedOperationException("core index");
    }

    /** Removes every dp rank of an instance from every tier (ordered after that worker's pending events). */
    public CompletableFuture<Void> removeInstance(long instanceId) {
        throw new UnsupportedOperationException("core index");
    }

    /** Removes one (instance, dp rank) from every tier; used by unregister of one rank and by publisher restarts. */
    public CompletableFuture<Void> removeWorker(WorkerKey worker) {
        throw new UnsupportedOperationException("core index");
    }

    /** Completes when every write submitted before this call has been applied. */
    public CompletableFuture<Void> flush() {
        throw new UnsupportedOperationException("core index");
    }

    /** Local hashes of a query's tokens with this index's block size and seed rules. */
    public long[] localHashes(int[] tokens, String loraName, String cacheSalt) {
        throw new UnsupportedOperationException("core index");
    }

    /** Tiered match; sees every write applied before it began. */
    public MatchResult findMatches(long[] localHashes) {
        throw new UnsupportedOperationException("core index");
    }

    /** The whole index as single-block Stored RouterEvents: device tier first, parents before children. */
    public List<RouterEvent> dump() {
        throw new UnsupportedOperationException("core index");
    }

    /** Counters and sizes for metrics; cheap to call at scrape time. */
    public IndexStats stats() {
        throw new UnsupportedOperationException("core index");
    }
}
