package io.kvindexer.indexer.snapshot;

import io.kvindexer.indexer.dump.BinaryDumpWriter;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.index.DumpSink;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.index.StoreTimes;
import io.kvindexer.indexer.registry.DetachedWorker;
import io.kvindexer.indexer.registry.WorkerRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One consistent cut of a replica's state as a binary dump, version 4: the registrations with their watermarks and
 * what their listeners knew of the batch at each (so that the first replay after a restore can tell an engine that
 * restarted meanwhile), with the last-store times block expiry keeps when some tier has a TTL. Versions before 4 read
 * none of these (a rollback to one starts from a peer or empty, docs/operations.md); the registrations come
 * first, then (once the index writers have applied everything submitted before) every tree, so each tree holds at
 * least every batch up to its watermark; the blocks of workers still being unregistered stay out ({@link
 * io.kvindexer.indexer.registry.LeavingWorkers}). Each index is walked a few thousand nodes per read-lock hold; a step is
 * encoded into memory under the lock and written out after it: a writer waits for one step, never for the whole cut
 * nor for the disk, and the cut holds one step in memory, not the index. The trees may mix moments after the
 * watermarks; the replay after them converges (ADR 0004).
 */
public final class StateCut {

    /**
     * What a cut wrote: its size, and the most of it held in memory at once; and the workers {@code
     * --unregister-grace} kept detached at the cut, which go beside it ({@link GraceFile}).
     */
    record Size(long bytes, long mostHeld, List<DetachedWorker> detached) {}

    private StateCut() {}

    /**
     * Takes the cut into {@code out}; {@code patience} bounds all its waits together (the unregisters in flight, then
     * the index writers), so a cut never waits longer whatever number of streams is stuck.
     */
    static Size write(WorkerRegistry workers, Indexers indexers, Duration patience, OutputStream out)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        WorkerRegistry.Cut registry = workers.cut(deadline);
        List<SavedRegistration> registrations = registry.registrations();
        try {
            indexers.flushAll().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException(
                    "the index writers did not catch up for the snapshot within " + patience.toMillis() + " ms: " + e,
                    e);
        }
        ChunkedBytes step = new ChunkedBytes();
        BinaryDumpWriter writer =
                new BinaryDumpWriter(step, registrations, indexers.keepsStoreTimes(), true, indexers.mixCacheSalt());
        // the blocks of workers still being unregistered (a stream stuck past its stop) stay out: no registration
        // here vouches for them
        DumpSink memberships = registry.leaving().without((DumpSink) writer::membership);
        StoreTimes.Sink times = registry.leaving().without((StoreTimes.Sink) writer::storeTimes);
        for (ModelIndex ix : indexers.all()) {
            writer.beginIndex(ix.modelName(), ix.tenantId(), ix.blockSize());
            ix.dump(memberships, () -> step.drainTo(out));
            // read after the walk: a block stored meanwhile has a time and maybe no membership (ignored when
            // loaded), one without a time starts its TTL when loaded, as before version 3
            ix.lastStores((worker, tier, hashes, millis) -> {
                times.times(worker, tier, hashes, millis);
                drain(step, out); // one worker's times held at a time
            });
            ix.cacheSalts((worker, salt, hashes) -> {
                writer.cacheSalts(worker, salt, hashes);
                drain(step, out);
            });
            writer.endIndex();
        }
        writer.close();
        step.drainTo(out);
        return new Size(step.size(), step.mostHeld(), registry.detached());
    }

    private static void drain(ChunkedBytes step, OutputStream out) {
        try {
            step.drainTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
