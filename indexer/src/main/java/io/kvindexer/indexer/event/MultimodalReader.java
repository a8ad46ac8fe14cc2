package io.kvindexer.indexer.event;

import static io.kvindexer.indexer.event.DecodeErrorKind.BAD_EVENT;

import io.kvindexer.indexer.hash.MultimodalHashes;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import org.msgpack.value.ValueType;

/**
 * Reads the per-block multimodal entries of the three producers that send them into {@link EventFields}: vLLM's
 * {@code extra_keys}, TensorRT-LLM's {@code mm_keys} and Dynamo's {@code block_mm_infos}. What carries no
 * identifier or hash is skipped; only the container shapes are checked, as the scalars are by {@link FieldReader}.
 */
final class MultimodalReader extends FieldsAtCursor {

    MultimodalReader(MsgpackCursor cursor, EventFields fields, Supplier<String> where) {
        super(cursor, fields, where);
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
        if (!cursor.nilOr(ValueType.ARRAY, "an array", BAD_EVENT, () -> where.get() + ": " + field)) {
            return null;
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
        return count == 0 ? null : Arrays.copyOf(hashes, count);
    }
}
