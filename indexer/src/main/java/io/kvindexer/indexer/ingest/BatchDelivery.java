package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.CacheGroups;
import io.kvindexer.indexer.event.EngineEventDecoder;
import io.kvindexer.indexer.event.EventDecodeException;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.event.KvEventBatch;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decodes one listener's batches and hands them to its sink for the effective (instance, dp rank): the
 * registered rank, or the batch's own {@code data_parallel_rank}. Remembers every rank it delivered for, so
 * dropping a worker's blocks (restart, unrecoverable gap) reaches all of them; a batch the index failed to apply
 * drops (and degrades) only its own rank. Decoding runs on the poller (or replay) thread serving the listener, so
 * listeners decode in parallel on those threads.
 */
final class BatchDelivery {

    private final ListenerSpec spec;
    private final BatchSink sink;
    private final EngineEventDecoder decoder;
    private final IngestMetrics metrics;
    private final ListenerLog log;
    private final Set<Integer> ranksSeen = ConcurrentHashMap.newKeySet();
    /** What this stream has taught about its cache groups (hybrid models); kept across reconnects. */
    private final CacheGroups cacheGroups = new CacheGroups();

    private final InflightBytes inflight;
    private final Exactness exactness;
    /** a store of the index's block size came from this stream: its engine was registered with its own size */
    private volatile boolean storedIndexSize;

    /** Decodes with the options' decoder, counts into their metrics, and holds bytes against their pollers' bound. */
    BatchDelivery(ListenerSpec spec, BatchSink sink, ListenerOptions options, ListenerLog log, Exactness exactness) {
        this.spec = spec;
        this.sink = sink;
        this.decoder = options.decoder();
        this.metrics = options.metrics();
        this.log = log;
        this.inflight = options.pollers().inflight();
        this.exactness = exactness;
        ranksSeen.add(spec.dpRank());
    }

    /**
     * A live message is {@code [topic, seq, payload]} with an 8-byte seq other than {@code ff x 8}; anything else is
     * counted, logged, skipped. That seq is the replay end marker's, never a live batch's (engines count from 0, or
     * from the clock's nanoseconds, far below it), and it is also the unset watermark: taken, it would read as a
     * restart and leave the stream with no watermark.
     */
    boolean wellFormed(List<byte[]> frames) {
        if (frames.size() != 3) {
            metrics.malformedFrame("frame_count");
            log.once(
                    "frame_count",
                    "skipping a message of " + frames.size() + " frames; expected 3 [topic, seq, payload]");
            return false;
        }
        int seqLength = frames.get(1).length;
        if (seqLength != 8) {
            metrics.malformedFrame("seq_length");
            log.once("seq_length", "skipping a message whose seq frame has " + seqLength + " bytes; expected 8");
            return false;
        }
        if (Frames.readSeq(frames.get(1)) == Frames.END_SEQ) {
            metrics.malformedFrame("reserved_seq");
            log.once(
                    "reserved_seq",
                    "skipping a message with seq ff ff ff ff ff ff ff ff: that value is the replay end marker's");
            return false;
        }
        return true;
    }

    /** Decodes one payload; null when it does not decode (counted, logged once per kind of problem). */
    KvEventBatch decode(long seq, byte[] payload) {
        try {
            return decoder.decode(payload, cacheGroups);
        } catch (EventDecodeException e) {
            metrics.decodeError(e.kind());
            log.once("decode:" + e.kind(), "skipping batch seq " + Long.toUnsignedString(seq) + ": " + e.getMessage());
        } catch (RuntimeException e) {
            metrics.decodeError("internal");
            log.once("decode:internal", "skipping batch seq " + Long.toUnsignedString(seq) + ", decoder failed: " + e);
        }
        return null;
    }

    /**
     * Hands a decoded batch of {@code bytes} payload bytes to the index. The registration's {@code watermark} hears
     * of it once the index has applied it ({@link SequenceWatermark#onApplied}).
     */
    void deliver(long seq, KvEventBatch batch, long bytes, SequenceWatermark watermark) {
        int rank = batch.dataParallelRank() != null ? batch.dataParallelRank() : spec.dpRank();
        ranksSeen.add(rank);
        List<KvEvent> events = batch.events();
        int afterClear = afterLastClear(events);
        if (afterClear > 0) {
            // the engine's state of that rank is known again from its clear on; told before the index write, so
            // that the write's failure (on a writer thread) comes after it and is not cleared by it, and before the
            // stores that follow the clear, whose refusal it must not clear either
            exactness.cleared(rank);
        }
        checkBlockSize(events, afterClear, rank);
        if (!events.isEmpty()) {
            inflight.taken(bytes); // until the index has applied it: the pollers stop reading at the budget
            long handed = watermark.handedNow();
            sink.apply(
                    new WorkerKey(spec.instanceId(), rank),
                    batch.events(),
                    () -> {
                        inflight.released(bytes);
                        watermark.applied(seq, handed);
                    },
                    failure -> writeFailed(seq, rank, failure));
        }
        if (batch.unknownEvents() > 0) {
            metrics.unknownEvents(batch.unknownEvents());
        }
        batch.warnings().forEach((warning, count) -> metrics.eventWarning(warning.label(), count));
        metrics.batchApplied();
    }

    /**
     * The index failed to apply batch {@code seq} of {@code rank} and dropped that rank's blocks (a half-applied
     * batch could claim blocks nobody can vouch for): like an unrecoverable gap, the listener is degraded until the
     * rank sends {@code AllBlocksCleared}, the engine restarts or the hold ends. On the index writer thread.
     */
    private void writeFailed(long seq, int rank, Throwable failure) {
        String why = "index write of batch seq " + Long.toUnsignedString(seq) + " failed (" + failure
                + "); dropped the blocks of dp_rank " + Integer.toUnsignedString(rank) + ", live events rebuild them";
        exactness.lost(why, Set.of(rank));
        log.warn(why);
    }

    /**
     * An engine whose blocks are not the index's size (registered with another {@code block_size}): the index
     * refuses its stores (counted as {@code block_size_mismatch}), so it can vouch for none of that engine's blocks.
     * The listener says so, degraded with both sizes, for as long as such stores come (the index's own rule,
     * {@link BlockStored#blockSizeDiffers}). A {@link BlockStored#partialEntry} of a stream that has stored blocks of
     * the index's size is no such sign: the engine publishes those beside its full blocks, which are indexed. Only
     * the stores from {@code from} on count: one before the batch's {@code AllBlocksCleared} is gone with it.
     */
    private void checkBlockSize(List<KvEvent> events, int from, int rank) {
        int expected = sink.blockSize();
        if (expected <= 0) {
            return;
        }
        for (KvEvent e : events) {
            if (e instanceof BlockStored s && !s.hashesOnly() && s.blockSize() == expected) {
                storedIndexSize = true;
            }
        }
        for (KvEvent e : events.subList(from, events.size())) {
            if (e instanceof BlockStored s && s.blockSizeDiffers(expected)) {
                if (storedIndexSize && s.partialEntry(expected)) {
                    continue; // vLLM's partial prefix-cache entry of an engine whose full blocks are indexed
                }
                String why = "block size mismatch: the engine stores blocks of " + s.blockSize()
                        + " tokens, this index of " + expected + "; its stores are not indexed (register it with"
                        + " block_size " + s.blockSize() + ", under a model or tenant of that size)";
                exactness.lost(why, Set.of(rank));
                log.once("block_size", why);
                return;
            }
        }
    }

    /** The index of the event after the batch's last {@code AllBlocksCleared}; 0 when it has none. */
    private static int afterLastClear(List<KvEvent> events) {
        for (int i = events.size() - 1; i >= 0; i--) {
            if (events.get(i) instanceof AllBlocksCleared) {
                return i + 1;
            }
        }
        return 0;
    }

    /** Every rank this stream delivered for (the registered one first seen). */
    Set<Integer> ranks() {
        return Set.copyOf(ranksSeen);
    }

    /** A new engine process: everything every rank of this stream held is gone. */
    void publisherRestarted() {
        exactness.restarted();
        for (int rank : ranksSeen) {
            sink.publisherRestarted(new WorkerKey(spec.instanceId(), rank));
        }
        metrics.publisherRestarted();
    }

    /** Batches of this stream are lost for good: what its ranks hold may be wrong, so it goes. */
    void dropUnverifiable() {
        for (int rank : ranksSeen) {
            sink.gapUnrecoverable(new WorkerKey(spec.instanceId(), rank));
        }
    }
}
