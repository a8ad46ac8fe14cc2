package io.kvindexer.indexer.event;

import io.kvindexer.indexer.common.MetricLabel;

/**
 * Why a payload did not decode. The labels are the {@code kind} label values of the decode-error metric and of
 * {@link EventDecodeException#kind()}: keep them stable, dashboards and alerts match on them.
 */
public enum DecodeErrorKind implements MetricLabel {
    /** no bytes at all */
    EMPTY_PAYLOAD,
    /** the bytes are not msgpack */
    NOT_MSGPACK,
    /** the payload ends inside a value, or a declared length exceeds the bytes left */
    TRUNCATED,
    /** the batch envelope {@code [ts, events, rank?]} is malformed, or bytes follow it */
    BAD_ENVELOPE,
    /** an event is not a tagged array or map, or misses or mistypes a field */
    BAD_EVENT,
    /** a block hash is neither an integer nor a bin digest */
    BAD_HASH,
    /** a token id is not a u32 (or a bigram pair of them) */
    BAD_TOKEN,
    /** a defect of ours met an odd input: reported as a bad payload rather than taking the listener down */
    MALFORMED
}
