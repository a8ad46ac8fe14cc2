package io.kvindexer.indexer.event;

import static io.kvindexer.indexer.event.DecodeErrorKind.BAD_ENVELOPE;
import static io.kvindexer.indexer.event.DecodeErrorKind.MALFORMED;
import static io.kvindexer.indexer.event.DecodeErrorKind.NOT_MSGPACK;
import static io.kvindexer.indexer.event.DecodeErrorKind.TRUNCATED;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessageInsufficientBufferException;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageSizeException;
import org.msgpack.value.ValueType;

/**
 * Decodes one msgpack payload of an engine's KV-event stream into a {@link KvEventBatch}. Stateless and
 * thread-safe; what a stream teaches about its cache groups lives in the {@link CacheGroups} the caller passes.
 *
 * <p>Accepts the encodings of the engines listed in {@code docs/compatibility.md}: the envelope
 * {@code [ts, events, rank?, ...]} with 2 or more elements; events as tagged arrays (vLLM ≤ 0.23, SGLang, ROCm
 * ATOM; read by position with length guards and a typed tail), tagged maps (newer vLLM, SGLang, TensorRT-LLM;
 * keys in any order, unknown keys ignored), or either packed in a {@code bin} (llm-d's storage publisher), mixed
 * in one batch. An unknown event tag skips that event and is counted instead of failing the batch.
 *
 * <p>Events that decode but must not be indexed as they came are skipped (or, for an unknown medium, indexed on
 * the external tier) and counted in {@link KvEventBatch#warnings()}: an {@code ownership} domain, a non-local
 * {@code locality}, a cache group that is not full attention, a store whose tokens do not fill its blocks.
 *
 * <p>Trailing bytes after the envelope are an error ({@code bad_envelope}): an engine payload is exactly one
 * msgpack value, so anything after it means a framing fault, and indexing a damaged batch is worse than
 * re-syncing it. Every failure is an {@link EventDecodeException} whose kind is a {@link DecodeErrorKind}.
 */
public final class EngineEventDecoder {

    /** Decodes with no memory of the stream (removals of a non-zero cache group are then skipped). */
    public KvEventBatch decode(byte[] payload) throws EventDecodeException {
        return decode(payload, new CacheGroups());
    }

    /** Decodes one payload of the stream whose cache-group knowledge {@code groups} holds (and learns into). */
    public KvEventBatch decode(byte[] payload, CacheGroups groups) throws EventDecodeException {
        if (payload == null || payload.length == 0) {
            throw new EventDecodeException(DecodeErrorKind.EMPTY_PAYLOAD, "empty payload");
        }
        Batch batch = new Batch(payload, groups);
        try (batch.cursor) {
            return batch.read();
        } catch (MessageInsufficientBufferException e) {
            throw new EventDecodeException(TRUNCATED, batch.where() + ": payload ends in the middle of a value", e);
        } catch (MessageSizeException e) {
            throw new EventDecodeException(TRUNCATED, batch.where() + ": declared length too large", e);
        } catch (MessagePackException e) {
            throw new EventDecodeException(NOT_MSGPACK, batch.where() + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new EventDecodeException(NOT_MSGPACK, batch.where() + ": " + e, e);
        } catch (RuntimeException e) {
            // a defect of ours on some odd input must not take the listener down: report it as a bad payload
            throw new EventDecodeException(MALFORMED, batch.where() + ": " + e, e);
        }
    }

    /** The state of one {@link #decode} call: the envelope, then each event through {@link EventReader}. */
    private static final class Batch {

        final MsgpackCursor cursor;
        final CacheGroups groups;
        final EventReader events;
        int eventIndex = -1;
        Map<EventWarning, Integer> warnings;

        Batch(byte[] payload, CacheGroups groups) {
            this.cursor = new MsgpackCursor(payload, 0, this::where);
            this.groups = groups;
            this.events = new EventReader(payload, cursor, this::where);
        }

        String where() {
            if (eventIndex < 0) {
                return "envelope";
            }
            return "event " + eventIndex + (events.tagName == null ? "" : " (" + events.tagName + ")");
        }

        KvEventBatch read() throws IOException, EventDecodeException {
            if (cursor.peekType() != ValueType.ARRAY) {
                throw new EventDecodeException(
                        BAD_ENVELOPE,
                        "envelope: expected an array [ts, events, data_parallel_rank], got " + cursor.peekType());
            }
            int fields = cursor.arrayHeader("array");
            if (fields < 2) {
                throw new EventDecodeException(
                        BAD_ENVELOPE, "envelope: expected at least 2 elements [ts, events], got " + fields);
            }
            double ts = timestamp();
            if (cursor.peekType() != ValueType.ARRAY) {
                throw new EventDecodeException(
                        BAD_ENVELOPE, "envelope: events: expected an array, got " + cursor.peekType());
            }
            int count = cursor.arrayHeader("events");
            List<KvEvent> decoded = new ArrayList<>(count);
            int unknown = 0;
            int ignored = 0;
            for (int i = 0; i < count; i++) {
                eventIndex = i;
                EventReader.Tag tag = events.event();
                KvEvent event = switch (tag) {
                    case STORED, REMOVED -> blockEvent(tag == EventReader.Tag.STORED);
                    case CLEARED -> warnOrNull(events.fields().clearSkipReason()) ? null : new AllBlocksCleared();
                    case IGNORED, UNKNOWN -> null;
                };
                if (event != null) {
                    decoded.add(event);
                } else if (tag == EventReader.Tag.UNKNOWN) {
                    unknown++;
                } else {
                    ignored++;
                }
            }
            eventIndex = -1;
            events.tagName = null;
            Integer rank = fields >= 3 ? rank() : null;
            for (int i = 3; i < fields; i++) {
                cursor.skip();
            }
            if (cursor.hasNext()) {
                throw new EventDecodeException(
                        BAD_ENVELOPE, "envelope: " + cursor.remaining() + " trailing bytes after the batch");
            }
            return new KvEventBatch(
                    ts,
                    Collections.unmodifiableList(decoded),
                    rank,
                    unknown,
                    ignored,
                    warnings == null ? Map.of() : Collections.unmodifiableMap(warnings));
        }

        private KvEvent blockEvent(boolean store) {
            EventFields f = events.fields();
            if (warnOrNull(f.skipReason(groups, store))) {
                return null;
            }
            if (f.unknownMedium()) {
                warn(EventWarning.UNKNOWN_MEDIUM);
            }
            return store ? f.stored() : f.removed();
        }

        /** Counts {@code warning} when there is one; true when the event is to be skipped. */
        private boolean warnOrNull(EventWarning warning) {
            if (warning == null) {
                return false;
            }
            warn(warning);
            return true;
        }

        private void warn(EventWarning warning) {
            if (warnings == null) {
                warnings = new EnumMap<>(EventWarning.class);
            }
            warnings.merge(warning, 1, Integer::sum);
        }

        private double timestamp() throws IOException, EventDecodeException {
            return switch (cursor.peekType()) {
                case FLOAT -> cursor.floatValue();
                case INTEGER -> cursor.nextIsUint64() ? unsignedToDouble(cursor.rawLong()) : (double) cursor.rawLong();
                default ->
                    throw new EventDecodeException(
                            BAD_ENVELOPE, "envelope: ts: expected a number, got " + cursor.peekType());
            };
        }

        private Integer rank() throws IOException, EventDecodeException {
            MsgpackCursor in = cursor;
            if (!in.nilOr(ValueType.INTEGER, "an integer", BAD_ENVELOPE, () -> "envelope: data_parallel_rank")) {
                return null;
            }
            boolean huge = in.nextIsUint64();
            long v = in.rawLong();
            if (huge || v < Integer.MIN_VALUE || v > 0xFFFF_FFFFL) {
                throw new EventDecodeException(
                        BAD_ENVELOPE,
                        "envelope: data_parallel_rank: " + (huge ? Long.toUnsignedString(v) : Long.toString(v))
                                + " is out of the 32-bit range");
            }
            return (int) v; // i32 or u32, kept as the 32-bit pattern
        }

        private static double unsignedToDouble(long v) {
            return v >= 0 ? v : (double) (v >>> 1) * 2.0;
        }
    }
}
