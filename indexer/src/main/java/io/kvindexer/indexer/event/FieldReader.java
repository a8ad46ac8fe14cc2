package io.kvindexer.indexer.event;

import static io.kvindexer.indexer.event.DecodeErrorKind.BAD_EVENT;
import static io.kvindexer.indexer.event.DecodeErrorKind.BAD_HASH;
import static io.kvindexer.indexer.event.DecodeErrorKind.BAD_TOKEN;

import io.kvindexer.indexer.hash.MultimodalHashes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.msgpack.value.ValueType;

/**
 * Reads the values of one event's fields at the cursor into {@link EventFields}, checking each type and range:
 * hashes (any msgpack int or a {@code bin} digest), token ids (u32, EAGLE bigram pairs, TensorRT-LLM's numeric
 * strings), and the per-block multimodal entries of the three producers that send them.
 */
final class FieldReader {

    private final MsgpackCursor cursor;
    private final EventFields fields;
    private final Supplier<String> where;

    FieldReader(MsgpackCursor cursor, EventFields fields, Supplier<String> where) {
        this.cursor = cursor;
        this.fields = fields;
        this.where = where;
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

    /**
     * {@code extra_keys}: per block, nil or a list of items. Strings and {@code [identifier, offset, ...]} tuples
     * are kept for {@link MultimodalHashes#ofBlock}; other items (prompt-embedding bytes, typed structs) are skipped.
     */
    void extraKeys() throws IOException, EventDecodeException {
        fields.extraKeys = perBlock("extra_keys", false);
    }

    /** TensorRT-LLM's {@code mm_keys}: per block, nil or a list of {@code {"type":"mm_key","hash":hex,...}}. */
    void mmKeys() throws IOException, EventDecodeException {
        fields.mmKeys = perBlock("mm_keys", true);
    }

    private List<List<MultimodalHashes.Key>> perBlock(String field, boolean mmKeyMaps)
            throws IOException, EventDecodeException {
        ValueType type = cursor.peekType();
        if (type == ValueType.NIL) {
            cursor.skipNil();
            return null;
        }
        if (type != ValueType.ARRAY) {
            throw new EventDecodeException(
                    BAD_EVENT, where.get() + ": " + field + ": expected an array or nil, got " + type);
        }
        int blocks = cursor.arrayHeader(field);
        List<List<MultimodalHashes.Key>> perBlock = new ArrayList<>(blocks);
        for (int b = 0; b < blocks; b++) {
            if (cursor.peekType() != ValueType.ARRAY) {
                cursor.skip(); // nil: nothing for this block
                perBlock.add(null);
                continue;
            }
            int items = cursor.arrayHeader(field + " entry");
            List<MultimodalHashes.Key> keys = new ArrayList<>(Math.min(items, 8));
            for (int i = 0; i < items; i++) {
                MultimodalHashes.Key key = switch (cursor.peekType()) {
                    case STRING ->
                        mmKeyMaps
                                ? tupleKey(cursor.string(field + " entry"))
                                : new MultimodalHashes.Key(cursor.string(field + " entry"), false);
                    case ARRAY -> tupleEntry(field);
                    case MAP -> mmKeyMaps ? mmKeyEntry(field) : skipped();
                    default -> skipped();
                };
                if (key != null) {
                    keys.add(key);
                }
            }
            perBlock.add(keys);
        }
        return perBlock;
    }

    private static MultimodalHashes.Key tupleKey(String identifier) {
        return new MultimodalHashes.Key(identifier, true);
    }

    private MultimodalHashes.Key skipped() throws IOException {
        cursor.skip();
        return null;
    }

    /** {@code [identifier, offset, ...]}: the identifier when it is a string. */
    private MultimodalHashes.Key tupleEntry(String field) throws IOException, EventDecodeException {
        int len = cursor.arrayHeader(field + " entry");
        MultimodalHashes.Key key = null;
        int consumed = 0;
        if (len > 0 && cursor.peekType() == ValueType.STRING) {
            key = tupleKey(cursor.string(field + " entry"));
            consumed = 1;
        }
        for (int k = consumed; k < len; k++) {
            cursor.skip();
        }
        return key;
    }

    /** {@code {"type":"mm_key","hash":hex,"start_offset":n,"uuid"?}}: the {@code hash}, unless tagged otherwise. */
    private MultimodalHashes.Key mmKeyEntry(String field) throws IOException, EventDecodeException {
        int n = cursor.mapHeader(field + " entry");
        String hash = null;
        boolean otherType = false;
        for (int i = 0; i < n; i++) {
            if (cursor.peekType() != ValueType.STRING) {
                cursor.skip();
                cursor.skip();
                continue;
            }
            String key = cursor.string("key");
            if (key.equals("hash") && cursor.peekType() == ValueType.STRING) {
                hash = cursor.string("hash");
            } else if (key.equals("type") && cursor.peekType() == ValueType.STRING) {
                otherType = !cursor.string("type").equals("mm_key");
            } else {
                cursor.skip();
            }
        }
        return hash == null || otherType ? null : tupleKey(hash);
    }

    /**
     * Dynamo's {@code block_mm_infos}: per block nil or {@code {"mm_objects": [{"mm_hash": u64, "offsets": ...}]}}
     * (or the same structs as arrays). Entries of another shape carry no hash.
     */
    void blockMmInfos() throws IOException, EventDecodeException {
        if (cursor.peekType() != ValueType.ARRAY) {
            throw new EventDecodeException(
                    BAD_EVENT, where.get() + ": block_mm_infos: expected an array or nil, got " + cursor.peekType());
        }
        int blocks = cursor.arrayHeader("block_mm_infos");
        long[][] out = new long[blocks][];
        for (int b = 0; b < blocks; b++) {
            out[b] = switch (cursor.peekType()) {
                case MAP -> {
                    long[] found = null;
                    int n = cursor.mapHeader("block_mm_infos entry");
                    for (int i = 0; i < n; i++) {
                        if (cursor.stringEquals("key", "mm_objects")) {
                            found = mmObjects();
                        } else {
                            cursor.skip();
                        }
                    }
                    yield found;
                }
                case ARRAY -> {
                    int n = cursor.arrayHeader("block_mm_infos entry");
                    long[] found = n > 0 ? mmObjects() : null;
                    for (int i = 1; i < n; i++) {
                        cursor.skip();
                    }
                    yield found;
                }
                default -> {
                    cursor.skip();
                    yield null;
                }
            };
        }
        fields.blockMmInfos = out;
    }

    private long[] mmObjects() throws IOException, EventDecodeException {
        if (cursor.peekType() != ValueType.ARRAY) {
            cursor.skip();
            return null;
        }
        int n = cursor.arrayHeader("mm_objects");
        long[] hashes = new long[n];
        int count = 0;
        for (int i = 0; i < n; i++) {
            Long h = switch (cursor.peekType()) {
                case MAP -> {
                    Long found = null;
                    int entries = cursor.mapHeader("mm_object");
                    for (int e = 0; e < entries; e++) {
                        if (cursor.stringEquals("key", "mm_hash") && cursor.peekType() == ValueType.INTEGER) {
                            found = cursor.rawLong();
                        } else {
                            cursor.skip();
                        }
                    }
                    yield found;
                }
                case ARRAY -> {
                    int len = cursor.arrayHeader("mm_object");
                    Long found = len > 0 && cursor.peekType() == ValueType.INTEGER ? cursor.rawLong() : null;
                    for (int k = found == null ? 0 : 1; k < len; k++) {
                        cursor.skip();
                    }
                    yield found;
                }
                default -> {
                    cursor.skip();
                    yield null;
                }
            };
            if (h != null) {
                hashes[count++] = h;
            }
        }
        return count == 0 ? null : java.util.Arrays.copyOf(hashes, count);
    }
}
