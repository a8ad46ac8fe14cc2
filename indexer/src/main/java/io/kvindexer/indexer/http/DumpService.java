package io.kvindexer.indexer.http;

import io.helidon.common.media.type.MediaType;
import io.helidon.common.media.type.MediaTypes;
import io.helidon.common.parameters.Parameters;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.dump.BinaryDumpWriter;
import io.kvindexer.indexer.dump.DumpJson;
import io.kvindexer.indexer.index.ApplyStatus;
import io.kvindexer.indexer.index.DumpSink;
import io.kvindexer.indexer.index.IndexStats;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.index.StoreTimes;
import io.kvindexer.indexer.recovery.StartupGate;
import io.kvindexer.indexer.registry.LeavingWorkers;
import io.kvindexer.indexer.registry.WorkerRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /dump}: every index as {@code "model:tenant": {block_size, model_name, tenant_id, events}}, streamed
 * entry by entry (Dynamo's JSON, {@code docs/compatibility.md}); with {@code Accept: application/x-kvindexer-dump}
 * the same content as a {@link BinaryDump} stream (version 2, with the registrations and their watermarks, when
 * {@code ?registrations=true} asks for them; version 3, with the blocks' last-store times as well, when
 * {@code &store_times=true} is added; version 4, with the batch at each registration's watermark as well, when
 * {@code &watermark_batches=true} is; version 5, with the cache salts of salted blocks as well, when
 * {@code &cache_salts=true} is and the replica runs with {@code --mix-cache-salt}; version 6, with each registration
 * saying whether its watermark is a snapshot's no batch has proven since, when {@code &snapshot_watermarks=true} is).
 * With a {@code --block-ttl} the
 * JSON gives each block on a tier with a TTL its {@code last_store_ms} too (ours; Dynamo's reader ignores it), so that
 * JSON recovery keeps the TTLs as binary does.
 * Pending writes are flushed first, so the dump holds everything
 * accepted before the request. An index whose walk fails ends its entry with {@code "error"} after the events
 * written so far (an ERROR frame in binary), which a reader refuses as it refuses Dynamo's {@code {"error": ...}};
 * the status stays 200. While the replica is still recovering it answers 503. At most {@code --max-concurrent-dumps}
 * stream at once (one more gets 503 with {@code Retry-After}), and one whose client accepts no bytes for
 * {@code --dump-stall-timeout-ms} is abandoned ({@link DumpSlots}). {@code HEAD /dump} answers the same status and
 * headers without walking anything, and so without a length.
 */
record DumpService(Indexers indexers, WorkerRegistry workers, StartupGate gate, DumpSlots slots) implements ApiService {

    private static final System.Logger LOG = System.getLogger(DumpService.class.getName());
    private static final long FLUSH_TIMEOUT_SECONDS = 30;
    private static final MediaType BINARY = MediaTypes.create(BinaryDump.MEDIA_TYPE);
    /** seconds a client refused for want of a slot waits: a dump of a big index takes a few seconds */
    static final int RETRY_AFTER_SECONDS = 5;
    /** seconds a replica asks again a peer that is loading its snapshot: loading one takes a few seconds at most */
    static final int RECOVERING_RETRY_AFTER_SECONDS = 1;

    @Override
    public void routes(Routes routes) {
        routes.get("/dump", Routes.Access.TOKEN, this::dump);
    }

    private void dump(ServerRequest req, ServerResponse res) throws Exception {
        if (gate.isRecovering()) {
            // what it holds so far is not a recovered state: a replica recovering from this one would take it for
            // one and never read its own snapshot (Dynamo answers nothing at all before its recovery)
            if (gate.recoveringWithSnapshot()) {
                // it will have the state soon whatever its peers answer: a replica with nothing to fall back on
                // asks again (PeerRecovery) instead of starting empty for good
                res.header(HeaderNames.RETRY_AFTER, String.valueOf(RECOVERING_RETRY_AFTER_SECONDS));
            }
            JsonOut.error(res, 503, "indexer is not ready: " + StartupGate.RECOVERING);
            return;
        }
        boolean binary = wantsBinary(req);
        // binary with ?registrations=true: version 2, the registrations and watermarks read before the flush, so
        // the trees hold at least every batch up to each watermark (one cut; WorkerRegistry.cut)
        Parameters query = req.query(); // each flag checked for both formats: a typo is refused, not ignored
        boolean asked = QueryParameters.flag(query, "registrations", false);
        // with ?store_times=true as well: version 3, the last-store times of the blocks on tiers with a TTL
        boolean times = QueryParameters.flag(query, "store_times", false);
        // with ?watermark_batches=true as well: version 4, each registration with the batch at its watermark
        boolean batches = QueryParameters.flag(query, "watermark_batches", false);
        // with ?cache_salts=true as well: version 5, the salts of salted blocks, when this replica keeps them
        boolean salts = QueryParameters.flag(query, "cache_salts", false) && indexers.mixCacheSalt();
        // with ?snapshot_watermarks=true as well: version 6, each registration saying whether its watermark is a
        // snapshot's not proven since; only a reader that asks gets it, as an older one refuses the version
        boolean marks = QueryParameters.flag(query, "snapshot_watermarks", false);
        DumpSlots.Slot slot = slots.tryTake(String.valueOf(req.remotePeer().address()));
        if (slot == null) {
            res.header(HeaderNames.RETRY_AFTER, String.valueOf(RETRY_AFTER_SECONDS));
            JsonOut.error(
                    res,
                    503,
                    "too many dumps in progress (" + slots.max() + ", --max-concurrent-dumps); retry after "
                            + RETRY_AFTER_SECONDS + " s");
            return;
        }
        try (slot) {
            stream(
                    req,
                    res,
                    binary,
                    asked,
                    new Parts(asked && times, asked && batches, asked && salts, asked && marks),
                    slot);
        } catch (Exception e) { // the write's failure: IOException, or Helidon's UncheckedIOException
            if (!slot.abandoned()) {
                throw e;
            }
            // logged by the slot; the socket is closed, there is no one to answer
        }
    }

    private void stream(
            ServerRequest req, ServerResponse res, boolean binary, boolean asked, Parts parts, DumpSlots.Slot slot)
            throws Exception {
        // one deadline for the cut's waits together: the unregisters in flight, then the index writers
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(FLUSH_TIMEOUT_SECONDS);
        boolean head = res instanceof HeadResponse;
        WorkerRegistry.Cut cut = binary && asked && !head ? workers.cut(deadline) : null;
        indexers.flushAll().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        List<ModelIndex> all = indexers.all();
        res.status(Status.OK_200);
        if (blank(all)) {
            res.header(BinaryDump.BLANK_HEADER, "true");
        }
        res.header(
                binary
                        ? HeaderValues.create(HeaderNames.CONTENT_TYPE, BinaryDump.MEDIA_TYPE)
                        : HeaderValues.CONTENT_TYPE_JSON);
        if (binary) {
            res.header(BinaryDump.BLOCKS_HEADER, blockCounts(all));
        }
        if (head) {
            // the headers without walking the index: its length is known only by writing it
            ((HeadResponse) res).sendUnknownLength();
            return;
        }
        if (binary) {
            try (OutputStream out = slot.watch(res.outputStream())) {
                writeBinary(all, cut, parts, out);
            }
            return;
        }
        try (OutputStream out = slot.watch(res.outputStream());
                DumpJson.Writer writer = DumpJson.writer(out)) {
            for (ModelIndex ix : all) {
                writeJson(ix, writer, slot);
            }
        }
    }

    /**
     * One index's entry, chunk by chunk of the walk: a chunk's memberships are kept in columns under the read lock
     * and written between chunks, where no lock is held, so a slow client holds one chunk, not the index. A walk
     * that fails ends the entry with an {@code "error"}, which a recovering reader refuses as a whole.
     */
    private static void writeJson(ModelIndex ix, DumpJson.Writer writer, DumpSlots.Slot slot) throws IOException {
        // with a --block-ttl, each block's last store goes with it, so that a replica recovering from this JSON
        // starts the block's TTL from there and not anew (a block stored after this read has none: from arrival)
        StoreTimes times = new StoreTimes();
        ix.lastStores(times::times);
        DumpEvents chunk = new DumpEvents(times);
        writer.begin(ix.modelName(), ix.tenantId(), ix.blockSize());
        try {
            ix.dump(chunk, () -> chunk.drainTo(writer));
            chunk.drainTo(writer);
        } catch (RuntimeException e) {
            if (slot.abandoned()) {
                throw e; // the client's write failed, not the walk
            }
            walkFailed(ix, e);
            writer.abandon(e.toString());
            return;
        }
        writer.end();
    }

    private static void walkFailed(ModelIndex ix, RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "dump of " + ix.modelName() + ":" + ix.tenantId() + " failed", e);
    }

    /**
     * {@link BinaryDump#BLANK_HEADER}: nothing recovered at start, nothing stored or unregistered since. A replica
     * whose blocks all went (removed, expired) knows they went: it is not blank.
     */
    private boolean blank(List<ModelIndex> all) {
        return gate.startedBlank()
                && !workers.everUnregistered()
                && all.stream().allMatch(DumpService::neverStored);
    }

    private static boolean neverStored(ModelIndex ix) {
        IndexStats s = ix.stats();
        return s.blocks() == 0
                && s.applied().getOrDefault("stored", Map.of()).getOrDefault(ApplyStatus.OK.label(), 0L) == 0;
    }

    /** {@link BinaryDump#BLOCKS_HEADER}'s value. */
    private static String blockCounts(List<ModelIndex> all) {
        StringBuilder counts = new StringBuilder();
        for (ModelIndex ix : all) {
            counts.append(counts.isEmpty() ? "" : ",").append(ix.stats().blocks());
        }
        return counts.toString();
    }

    /** Binary when {@code Accept} prefers it to JSON ({@link Negotiation}); {@code *}{@code /*} stays JSON. */
    private static boolean wantsBinary(ServerRequest req) {
        return BINARY.equals(Negotiation.choose(req, MediaTypes.APPLICATION_JSON, BINARY));
    }

    /**
     * A producer thread encodes each index under its read lock into a {@link ChunkPipe} while this thread streams
     * the chunks out: a slow client never holds the lock that the index writers need, and a fast one receives
     * (and a recovering peer applies) the first frames while the rest is still being encoded.
     */
    static void writeBinary(List<ModelIndex> indexes, WorkerRegistry.Cut cut, Parts parts, OutputStream out)
            throws IOException, InterruptedException {
        ChunkPipe pipe = new ChunkPipe();
        Thread.ofVirtual().name("dump-encoder").start(() -> {
            Throwable failure = null;
            try {
                encode(indexes, cut, parts, pipe);
            } catch (IOException | RuntimeException e) {
                failure = e;
            } finally {
                pipe.finish(failure);
            }
        });
        pipe.drainTo(out);
    }

    /**
     * With a registry {@code cut} (version 2 to 6), its registrations go first and the blocks of the workers it found
     * still being unregistered stay out, as in a snapshot ({@code StateCut}); without one (version 1), every block.
     */
    private static void encode(List<ModelIndex> indexes, WorkerRegistry.Cut cut, Parts parts, ChunkPipe pipe)
            throws IOException {
        BinaryDumpWriter writer = cut == null
                ? new BinaryDumpWriter(pipe)
                : new BinaryDumpWriter(
                        pipe,
                        cut.registrations(),
                        parts.storeTimes(),
                        parts.watermarkBatches(),
                        parts.cacheSalts(),
                        parts.snapshotWatermarks());
        LeavingWorkers leaving = cut == null ? LeavingWorkers.NONE : cut.leaving();
        DumpSink memberships = leaving.without((DumpSink) writer::membership);
        StoreTimes.Sink storeTimes = leaving.without((StoreTimes.Sink) writer::storeTimes);
        for (ModelIndex ix : indexes) {
            try {
                writer.beginIndex(ix.modelName(), ix.tenantId(), ix.blockSize());
                // a slow client: wait between chunks of the walk, holding no lock, not with the bytes
                ix.dump(memberships, pipe::awaitRoom);
                if (parts.storeTimes()) {
                    // a worker's times at a time, each waiting for room like a chunk of the walk
                    ix.lastStores((worker, tier, hashes, millis) -> {
                        storeTimes.times(worker, tier, hashes, millis);
                        awaitRoom(pipe);
                    });
                }
                if (parts.cacheSalts()) {
                    ix.cacheSalts((worker, salt, hashes) -> {
                        writer.cacheSalts(worker, salt, hashes);
                        awaitRoom(pipe);
                    });
                }
                writer.endIndex();
            } catch (RuntimeException e) {
                if (pipe.abandoned()) {
                    throw e; // the client went away (or was given up on), not the walk
                }
                walkFailed(ix, e);
                // a reader refuses the whole stream at an ERROR frame, so what of this section went out is moot
                writer.abandonIndex();
                writer.error(ix.modelName(), ix.tenantId(), e.getClass().getSimpleName());
            }
            pipe.flush();
            pipe.awaitRoom();
        }
        writer.close();
    }

    private static void awaitRoom(ChunkPipe pipe) {
        try {
            pipe.awaitRoom();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** What a binary dump carries beyond the trees and registrations: its version's optional parts. */
    record Parts(boolean storeTimes, boolean watermarkBatches, boolean cacheSalts, boolean snapshotWatermarks) {}
}
