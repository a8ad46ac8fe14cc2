package io.kvindexer.indexer.ingest;

import java.time.Instant;

/**
 * How far a stream has come, as {@code /workers} shows it: the last seq applied (restored from a peer or a snapshot
 * too) and when this process last applied a batch. "Connected, but no batch ever" is the usual sign of an engine
 * that does not publish where it was registered (events off, the replay port registered as the PUB one).
 *
 * @param lastSeq     u64; {@link SequenceWatermark#UNSET} before the first
 * @param lastBatchAt null until this process applies a batch of the stream
 */
public record StreamProgress(long lastSeq, Instant lastBatchAt) {

    public static final StreamProgress NONE = new StreamProgress(SequenceWatermark.UNSET, null);
}
