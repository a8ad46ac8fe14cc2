package io.kvindexer.indexer.snapshot;

import io.kvindexer.indexer.dump.BinaryDumpWriter;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.registry.WorkerRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One consistent cut of a replica's state as a version 2 binary dump in memory: the registrations with their
 * watermarks first, then (once the index writers have applied everything submitted before) every tree, so each
 * tree holds at least every batch up to its watermark. Each index is encoded into memory by a walk that takes its
 * shards' read locks a few thousand nodes at a time: a writer waits for one such chunk, never for the whole cut nor
 * for the disk. The trees may mix moments after the watermarks; the replay after them converges (ADR 0004).
 */
public final class StateCut {

    private StateCut() {}

    /** Takes the cut; {@code flushTimeout} bounds the wait for the writers. */
    static ChunkedBytes take(WorkerRegistry workers, Indexers indexers, Duration flushTimeout)
            throws IOException, InterruptedException {
        List<SavedRegistration> registrations = workers.export();
        try {
            indexers.flushAll().get(flushTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("the index writers did not catch up for the snapshot: " + e, e);
        }
        ChunkedBytes out = new ChunkedBytes();
        BinaryDumpWriter writer = new BinaryDumpWriter(out, registrations);
        try {
            for (ModelIndex ix : indexers.all()) {
                writer.beginIndex(ix.modelName(), ix.tenantId(), ix.blockSize());
                ix.dump(writer::membership);
                writer.endIndex();
            }
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        writer.close();
        return out;
    }
}
