package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.common.MetricLabel;

/**
 * What the listeners report for metrics. Implementations must be thread-safe (every listener calls them from
 * its own thread) and cheap; labels are short bounded strings.
 */
public interface IngestMetrics {

    /** How a replay ended. */
    enum ReplayResult implements MetricLabel {
        /** the whole requested range came back */
        OK,
        /** the engine answered, but not the whole range (buffer too short, skipped seqs) */
        INCOMPLETE,
        /** a malformed reply or a socket error stopped it */
        FAILED,
        /** the engine's ROUTER did not answer in time */
        TIMEOUT
    }

    IngestMetrics NOOP = new IngestMetrics() {};

    /** A live message with the wrong frame count ({@code frame_count}) or seq length ({@code seq_length}). */
    default void malformedFrame(String kind) {}

    /** A payload that did not decode; {@code kind} is {@code EventDecodeException.kind()}. */
    default void decodeError(String kind) {}

    /** A seq gap (or a first seq above 0) was seen; {@code missing} batches were not received live. */
    default void gapDetected(long missing) {}

    /** A gap could not be replayed because the registration has no replay endpoint. */
    default void batchesLost(long missing) {}

    /**
     * A gap could not be recovered and the worker's blocks were dropped ({@code missing} batches lost); counted
     * once per gap.
     */
    default void gapUnrecoverable(long missing) {}

    /** A connection that had not finished its ZMTP handshake in time was dropped and made again. */
    default void handshakeRetry() {}

    /** A listener's handshaken connection to its engine went down (the engine stopped or the network broke). */
    default void engineDisconnected() {}

    /** A replay ended; {@code batchesRecovered} batches from it were applied. */
    default void replay(ReplayResult result, long batchesRecovered) {}

    /** Events with an unknown tag were skipped inside an applied batch. */
    default void unknownEvents(int count) {}

    /**
     * Events of an applied batch that were skipped or indexed with a fallback; {@code kind} is an
     * {@code EventWarning} label (e.g. {@code non_local}).
     */
    default void eventWarning(String kind, int count) {}

    /** The publisher's seq went backwards: the engine restarted. */
    default void publisherRestarted() {}

    /** A batch was applied (live or replayed). */
    default void batchApplied() {}

    /** A live batch was skipped because its seq was already applied (duplicate or covered by a replay). */
    default void staleBatch() {}
}
