package io.kvindexer.indexer.event;

import static io.kvindexer.indexer.event.DecodeErrorKind.BAD_EVENT;
import static io.kvindexer.indexer.event.DecodeErrorKind.BAD_HASH;
import static io.kvindexer.indexer.event.DecodeErrorKind.BAD_TOKEN;

import java.io.IOException;
import java.util.function.Supplier;
import org.msgpack.value.ValueType;

/**
 * Reads the scalar values of one event's fields at the cursor into {@link EventFields}, checking each type and
 * range: hashes (any msgpack int or a {@code bin} digest), token ids (u32, EAGLE bigram pairs, TensorRT-LLM's
 * numeric strings), block size, group index and the short strings. The per-block multimodal entries are
 * {@link MultimodalReader}'s.
 */
final class FieldReader extends FieldsAtCursor {

    FieldReader(MsgpackCursor cursor, EventFields fields, Supplier<String> where) {
        super(cursor, fields, where);
    }

    long[] hashes(String field) throws IOException, EventDecodeException {
        if (cursor.peekType() != ValueType.ARRAY) {
            throw new EventDecodeException(
                    BAD_EVENT, where.get() + ": " + field + ": expected an array, got " + cursor.peekType());
        }
        int n = cursor.arrayHeader(field);
        long[] out = new long[n];
        for (int i = cursor.longRun(out, n); i < n; i++) {
            out[i] = hash(field, i);
        }
        return out;
    }

    private long hash(String field, int index) throws IOException, EventDecodeException {
        return switch (cursor.peekType()) {
            case INTEGER -> cursor.rawLong();
            case BINARY -> cursor.binaryAsLong(field);
            default ->
                throw new EventDecodeException(
                        BAD_HASH,
                        where.get() + ": " + field + (index >= 0 ? "[" + index + "]" : "")
                                + ": expected an integer or bin, got " + cursor.peekType());
        };
    }

    void parent() throws IOException, EventDecodeException {
        if (cursor.peekType() == ValueType.NIL) {
            cursor.skipNil();
            fields.hasParent = false;
            fields.parentHash = 0;
        } else {
            fields.parentHash = hash("parent_block_hash", -1);
            fields.hasParent = true;
        }
    }

    /**
     * u32 token ids, or EAGLE bigram pairs flattened to {@code [a0, a1, ..., a_last, b_last]}. Plain ids are read
     * in bulk straight from the payload bytes; the per-element path only reads the entries that are not a plain
     * int (a pair, a string, or an error to report).
     */
    void tokens() throws IOException, EventDecodeException {
        if (cursor.peekType() != ValueType.ARRAY) {
            throw new EventDecodeException(
                    BAD_EVENT, where.get() + ": token_ids: expected an array, got " + cursor.peekType());
        }
        int n = cursor.arrayHeader("token_ids");
        fields.tokenEntries = n;
        if (n == 0) {
            fields.tokenIds = new int[0];
            return;
        }
        if (cursor.peekType() == ValueType.ARRAY) {
            bigrams(n);
            return;
        }
        int[] out = new int[n];
        for (int i = cursor.u32Run(out, 0, n); i < n; i += cursor.u32Run(out, i, n - i)) {
            out[i] = token(i); // one that is not a plain u32 (a string id, or an error), then bulk again
            i++;
        }
        fields.tokenIds = out;
    }

    private void bigrams(int n) throws IOException, EventDecodeException {
        fields.eagle = true;
        int[] out = new int[n + 1];
        for (int i = 0; i < n; i++) {
            if (cursor.peekType() != ValueType.ARRAY) {
                throw new EventDecodeException(
                        BAD_TOKEN,
                        where.get() + ": token_ids[" + i
                                + "]: expected a [token, token] pair like the first entry, got " + cursor.peekType());
            }
            int pairLength = cursor.arrayHeader("token_ids pair");
            if (pairLength != 2) {
                throw new EventDecodeException(
                        BAD_TOKEN,
                        where.get() + ": token_ids[" + i + "]: expected a pair, got " + pairLength + " elements");
            }
            out[i] = token(i);
            int second = token(i);
            if (i == n - 1) {
                out[n] = second;
            }
        }
        fields.tokenIds = out;
    }

    /** One token id; {@code index} is also its place in the flattened ids (bigram firsts keep their index). */
    private int token(int index) throws IOException, EventDecodeException {
        ValueType type = cursor.peekType();
        if (type == ValueType.STRING) {
            return stringToken(index, cursor.string("token_ids"));
        }
        if (type != ValueType.INTEGER) {
            throw new EventDecodeException(
                    BAD_TOKEN, where.get() + ": token_ids[" + index + "]: expected an integer, got " + type);
        }
        boolean huge = cursor.nextIsUint64();
        long v = cursor.rawLong();
        if (huge || v < 0 || v > 0xFFFF_FFFFL) {
            throw new EventDecodeException(
                    BAD_TOKEN,
                    where.get() + ": token_ids[" + index + "]: " + (huge ? Long.toUnsignedString(v) : Long.toString(v))
                            + " is not a u32 token id");
        }
        return (int) v;
    }

    /**
     * TensorRT-LLM types token ids {@code int | str}: a decimal string is that id; any other string marks the
     * block holding it (and the rest of the chain) as unhashable rather than inventing an id for it.
     */
    private int stringToken(int index, String text) {
        if (!text.isEmpty() && text.length() <= 10 && text.chars().allMatch(c -> c >= '0' && c <= '9')) {
            long v = Long.parseLong(text);
            if (v <= 0xFFFF_FFFFL) {
                return (int) v;
            }
        }
        if (fields.opaqueTokenAt < 0) {
            fields.opaqueTokenAt = index;
        }
        return 0;
    }

    void blockSize() throws IOException, EventDecodeException {
        if (cursor.peekType() != ValueType.INTEGER) {
            throw new EventDecodeException(
                    BAD_EVENT, where.get() + ": block_size: expected an integer, got " + cursor.peekType());
        }
        boolean huge = cursor.nextIsUint64();
        long v = cursor.rawLong();
        if (huge || v < 0 || v > Integer.MAX_VALUE) {
            throw new EventDecodeException(
                    BAD_EVENT,
                    where.get() + ": block_size: " + (huge ? Long.toUnsignedString(v) : Long.toString(v))
                            + " is out of range");
        }
        fields.blockSize = (int) v;
    }

    /**
     * vLLM's deprecated numeric adapter id: kept only when it is a positive integer (vLLM numbers adapters from 1, and
     * publishers write nil for the base model); anything else is skipped as before, never an error.
     */
    void loraId() throws IOException {
        if (cursor.peekType() == ValueType.INTEGER) {
            long v = cursor.rawLong();
            fields.loraId = v != 0 ? v : null;
        } else {
            cursor.skip();
        }
    }

    void groupIdx() throws IOException, EventDecodeException {
        switch (cursor.peekType()) {
            case NIL -> cursor.skipNil();
            case INTEGER -> fields.groupIdx = cursor.rawLong();
            default ->
                throw new EventDecodeException(
                        BAD_EVENT, where.get() + ": group_idx: expected an integer or nil, got " + cursor.peekType());
        }
    }

    /** The values that repeat on every event, matched without allocating a string for them. */
    private static final String[] COMMON_VALUES = {
        "GPU",
        "CPU",
        "CPU_PINNED",
        "DISK",
        "STORAGE",
        "LOCAL",
        "full_attention",
        "mla_attention",
        "sliding_window",
        "mamba"
    };

    String optionalString(String field) throws IOException, EventDecodeException {
        return switch (cursor.peekType()) {
            case NIL -> {
                cursor.skipNil();
                yield null;
            }
            case STRING -> cursor.knownString(field, COMMON_VALUES);
            default ->
                throw new EventDecodeException(
                        BAD_EVENT, where.get() + ": " + field + ": expected a string or nil, got " + cursor.peekType());
        };
    }
}
