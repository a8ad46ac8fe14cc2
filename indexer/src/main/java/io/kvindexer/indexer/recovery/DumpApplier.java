package io.kvindexer.indexer.recovery;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.DumpJson;
import io.kvindexer.indexer.dump.EventJsonException;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.index.IndexOp;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.index.StoreTimes;
import io.kvindexer.indexer.registry.Registration;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Feeds a peer's JSON {@code /dump} into our indexes (compatibility.md, Startup, recovery and readiness) as
 * {@link BinaryDumpApplier} does a binary one: each entry's events are staged, while the document is read, into a
 * detached index with the dump's block size, and only a document read to its end without fault is installed. An
 * existing index with another block size keeps its own (warning), as Dynamo does. Memory is the staged indexes and a
 * few thousand events, not the document's events as objects (about six times the index).
 */
final class DumpApplier implements DumpJson.Entries {

    private static final System.Logger LOG = System.getLogger(DumpApplier.class.getName());

    /** events handed to the writers at a time */
    static final int CHUNK = 4096;
    /** chunks between waits for the writers, so that parsing cannot queue up more than this many events' work */
    private static final int CHUNKS_IN_FLIGHT = 16;

    /** An entry read whole and staged, the names it goes live under, and its blocks' last-store times. */
    private record Staged(String modelName, String tenantId, int blockSize, ModelIndex index, StoreTimes times) {}

    private final Indexers indexers;
    private final long timeoutMillis;
    private final List<Staged> staged = new ArrayList<>();
    private final List<RouterEvent> chunk = new ArrayList<>(CHUNK);
    private ModelIndex current;
    /** the current entry's {@code last_store_ms} times (none from a Dynamo peer or one without a TTL) */
    private StoreTimes currentTimes;

    private int chunksSinceWait;

    private DumpApplier(Indexers indexers, long timeoutMillis) {
        this.indexers = indexers;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * Reads and stages the whole JSON dump; throws, having installed nothing, when it is not complete and valid. Its
     * trees go live when the result's {@code install} runs.
     */
    static Recovered parse(InputStream body, Indexers indexers, String source, long timeoutMillis)
            throws IOException, InterruptedException {
        DumpApplier applier = new DumpApplier(indexers, timeoutMillis);
        try {
            DumpJson.read(body, applier);
        } catch (EventJsonException e) {
            throw new IOException("invalid dump: " + e.getMessage(), e);
        } catch (StagingInterrupted e) {
            throw e.getCause();
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause(); // the writers did not finish in time
        }
        awaitStaging(indexers, timeoutMillis);
        List<Staged> staged = List.copyOf(applier.staged);
        return new Recovered(source, staged.size(), List.of(), () -> {
            for (Staged s : staged) {
                install(indexers, s.modelName(), s.tenantId(), s.blockSize(), s.index(), s.times(), LOG);
            }
        });
    }

    @Override
    public DumpJson.EventSink begin(String key, int blockSize) {
        // a Dynamo peer keeps an index registered with block_size 0: it holds nothing we could use (skipped in end)
        current = Registration.blockSizeProblem(blockSize) == null ? indexers.detached(key, "", blockSize) : null;
        currentTimes = new StoreTimes();
        return event -> {
            if (current != null) {
                storeTimes(event);
                chunk.add(event);
                if (chunk.size() == CHUNK) {
                    submitChunk();
                }
            }
        };
    }

    @Override
    public void end(String key, String modelName, String tenantId, int blockSize) {
        if (current == null) {
            LOG.log(
                    System.Logger.Level.WARNING,
                    "recovered index {0}:{1} skipped: block_size {2}",
                    modelName,
                    tenantId,
                    Registration.blockSizeProblem(blockSize));
            return;
        }
        submitChunk();
        staged.add(new Staged(modelName, tenantId, blockSize, current, currentTimes));
        current = null;
        currentTimes = null;
    }

    /**
     * Keeps a stored event's {@code last_store_ms} times for the install, where block expiry starts each block's TTL
     * from its time as it does from a binary dump's (one in the future counts as now); a block without one starts
     * its TTL when it arrives.
     */
    private void storeTimes(RouterEvent event) {
        if (!(event.data() instanceof RouterEvent.Stored s) || s.lastStoreMillis() == null) {
            return;
        }
        int n = 0;
        for (long t : s.lastStoreMillis()) {
            n += t == RouterEvent.Stored.NO_TIME ? 0 : 1;
        }
        if (n == 0) {
            return;
        }
        long[] hashes = new long[n];
        long[] millis = new long[n];
        for (int i = 0, j = 0; i < s.blockHashes().length; i++) {
            if (s.lastStoreMillis()[i] != RouterEvent.Stored.NO_TIME) {
                hashes[j] = s.blockHashes()[i];
                millis[j++] = s.lastStoreMillis()[i];
            }
        }
        currentTimes.times(new WorkerKey(event.instanceId(), event.dpRank()), event.tier(), hashes, millis);
    }

    /** The chunk's events to the staged index, grouped per worker in their order (one writer task per worker). */
    private void submitChunk() {
        if (chunk.isEmpty()) {
            return;
        }
        Map<WorkerKey, List<IndexOp>> byWorker = new LinkedHashMap<>();
        for (RouterEvent event : chunk) {
            byWorker.computeIfAbsent(new WorkerKey(event.instanceId(), event.dpRank()), w -> new ArrayList<>())
                    .add(RouterEventOps.of(event));
        }
        chunk.clear();
        byWorker.forEach(current::submitOps);
        if (++chunksSinceWait == CHUNKS_IN_FLIGHT) {
            chunksSinceWait = 0;
            try {
                awaitStaging(indexers, timeoutMillis);
            } catch (InterruptedException e) {
                throw new StagingInterrupted(e);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    /** Waits until the writers have applied every op staged so far; fails when they do not within the timeout. */
    static void awaitStaging(Indexers indexers, long timeoutMillis) throws IOException, InterruptedException {
        try {
            indexers.flushAll().get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IOException("staging the dump did not finish: " + e, e);
        }
    }

    /** An interrupt while waiting for the writers, carried out of the parser's callbacks. */
    private static final class StagingInterrupted extends RuntimeException {
        StagingInterrupted(InterruptedException cause) {
            super(cause);
        }

        @Override
        public synchronized InterruptedException getCause() {
            return (InterruptedException) super.getCause();
        }
    }

    /**
     * Puts a staged index's blocks into the live index of the same names: ours, created with the peer's block size
     * when we have none; when we have one with another block size, ours is kept (logged on {@code log}); nothing when
     * it vanished meanwhile.
     */
    static void install(
            Indexers indexers, String modelName, String tenantId, int blockSize, ModelIndex staged, System.Logger log) {
        install(indexers, modelName, tenantId, blockSize, staged, StoreTimes.NONE, log);
    }

    /** {@link #install} with the last-store times a binary dump carried for the index. */
    static void install(
            Indexers indexers,
            String modelName,
            String tenantId,
            int blockSize,
            ModelIndex staged,
            StoreTimes times,
            System.Logger log) {
        ModelIndex live = liveIndex(indexers, modelName, tenantId, blockSize, log);
        if (live != null) {
            live.adopt(staged, times);
        }
    }

    private static ModelIndex liveIndex(
            Indexers indexers, String modelName, String tenantId, int blockSize, System.Logger log) {
        try {
            return indexers.getOrCreate(modelName, tenantId, blockSize);
        } catch (Indexers.BlockSizeMismatchException e) {
            log.log(
                    System.Logger.Level.WARNING,
                    "recovered index {0}:{1} has block_size {2}; keeping ours ({3})",
                    modelName,
                    tenantId,
                    blockSize,
                    e.existing());
            return indexers.get(modelName, tenantId).orElse(null);
        }
    }
}
