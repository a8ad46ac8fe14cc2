package io.kvindexer.indexer.event;

import static io.kvindexer.indexer.event.DecodeErrorKind.BAD_EVENT;

import io.kvindexer.indexer.common.StorageTier;
import java.io.IOException;
import java.util.function.Supplier;
import org.msgpack.value.ValueType;

/**
 * Reads one event of a batch into {@link EventFields}, in either encoding: a tagged array read by position (the
 * declared fields, then a typed tail) or a tagged map read by key (any order, unknown keys ignored). Events of
 * llm-d's storage publisher arrive as a msgpack array packed inside a {@code bin}; they are read the same way.
 * The field values themselves are read by {@link FieldReader} (scalars) and {@link MultimodalReader}.
 */
final class EventReader {

    enum Tag {
        STORED,
        REMOVED,
        CLEARED,
        IGNORED,
        UNKNOWN
    }

    private final byte[] payload;
    private final Supplier<String> where;
    private final EventFields fields = new EventFields();
    private MsgpackCursor cursor;
    private FieldReader read;
    private MultimodalReader multimodal;
    String tagName;

    EventReader(byte[] payload, MsgpackCursor cursor, Supplier<String> where) {
        this.payload = payload;
        this.where = where;
        use(cursor);
    }

    EventFields fields() {
        return fields;
    }

    private void use(MsgpackCursor c) {
        cursor = c;
        read = new FieldReader(c, fields, where);
        multimodal = new MultimodalReader(c, fields, where);
    }

    /** Reads the next event (any tag) into {@link #fields()}. */
    Tag event() throws IOException, EventDecodeException {
        fields.reset();
        tagName = null;
        return switch (cursor.peekType()) {
            case ARRAY -> arrayEvent();
            case MAP -> mapEvent();
            case BINARY -> packedEvent();
            default ->
                throw new EventDecodeException(
                        BAD_EVENT, where.get() + ": expected a tagged array or map, got " + cursor.peekType());
        };
    }

    /** An event packed as one msgpack value inside a {@code bin} (llm-d-kv-cache's storage publisher). */
    private Tag packedEvent() throws IOException, EventDecodeException {
        int[] range = cursor.binaryRange("event");
        MsgpackCursor outer = cursor;
        try (MsgpackCursor inner = new MsgpackCursor(payload, range[0], range[0] + range[1], where)) {
            use(inner);
            ValueType type = inner.peekType();
            if (type != ValueType.ARRAY && type != ValueType.MAP) {
                throw new EventDecodeException(
                        BAD_EVENT, where.get() + ": bin-packed event: expected a tagged array or map, got " + type);
            }
            Tag tag = type == ValueType.ARRAY ? arrayEvent() : mapEvent();
            if (inner.remaining() > 0) {
                throw new EventDecodeException(
                        BAD_EVENT, where.get() + ": bin-packed event: " + inner.remaining() + " bytes after the event");
            }
            return tag;
        } finally {
            use(outer);
        }
    }

    static final String[] TAGS = {"BlockStored", "BlockRemoved", "AllBlocksCleared", "Ignored"};
    /** Every key some producer writes; matched without allocating a string per key. */
    static final String[] KEYS = {
        "type",
        "block_hashes",
        "parent_block_hash",
        "token_ids",
        "block_size",
        "lora_id",
        "medium",
        "lora_name",
        "extra_keys",
        "group_idx",
        "kv_cache_spec_kind",
        "kv_cache_spec_sliding_window",
        "locality",
        "ownership",
        "mm_keys",
        "block_mm_infos",
        "cache_salt",
        "session_id",
        "token_offset"
    };

    private Tag tagOf(String name) {
        tagName = name;
        return switch (name) {
            case "BlockStored" -> Tag.STORED;
            case "BlockRemoved" -> Tag.REMOVED;
            case "AllBlocksCleared" -> Tag.CLEARED;
            case "Ignored" -> Tag.IGNORED;
            default -> Tag.UNKNOWN;
        };
    }

    /** {@code [tag, f1, f2, ...]}: by position, with length guards (see {@code docs/compatibility.md}). */
    private Tag arrayEvent() throws IOException, EventDecodeException {
        int n = cursor.arrayHeader("event");
        if (n == 0) {
            throw new EventDecodeException(BAD_EVENT, where.get() + ": empty event array has no tag");
        }
        if (cursor.peekType() != ValueType.STRING) {
            throw new EventDecodeException(
                    BAD_EVENT, where.get() + ": tag: expected a string, got " + cursor.peekType());
        }
        Tag tag = tagOf(cursor.knownString("tag", TAGS));
        for (int pos = 1; pos < n; pos++) {
            switch (tag) {
                case STORED -> storedPosition(pos);
                case REMOVED -> removedPosition(pos);
                case CLEARED -> clearedPosition(pos);
                default -> cursor.skip();
            }
        }
        return requireFields(tag, n);
    }

    private void storedPosition(int pos) throws IOException, EventDecodeException {
        switch (pos) {
            case 1 -> fields.blockHashes = read.hashes("block_hashes");
            case 2 -> read.parent();
            case 3 -> read.tokens();
            case 4 -> read.blockSize();
            case 5 -> read.loraId(); // deprecated: what names an adapter when no lora_name does
            case 6 -> fields.medium = read.optionalString("medium");
            case 7 -> {
                // vLLM: lora_name; an SGLang build may put a metadata map ({cache_salt}) here
                if (cursor.peekType() == ValueType.MAP) {
                    saltMap();
                } else {
                    fields.loraName = read.optionalString("lora_name");
                }
            }
            case 8 -> multimodal.extraKeys();
            default -> tail(pos - 9, true);
        }
    }

    private void removedPosition(int pos) throws IOException, EventDecodeException {
        switch (pos) {
            case 1 -> fields.blockHashes = read.hashes("block_hashes");
            case 2 -> fields.medium = read.optionalString("medium");
            default -> tail(pos - 3, false);
        }
    }

    /**
     * {@code ["AllBlocksCleared", ownership?]} as Dynamo reads it; ROCm ATOM writes the medium of a one-tier clear
     * in that slot instead, which is recognised by the media table and clears as usual.
     */
    private void clearedPosition(int pos) throws IOException, EventDecodeException {
        if (pos == 1 && cursor.peekType() == ValueType.STRING) {
            String value = cursor.string("ownership");
            if (StorageTier.isUnknownMedium(value)) {
                fields.ownership = value;
            }
        } else {
            cursor.skip();
        }
    }

    /**
     * The positional tail after the declared fields: up to five slots {@code group_idx, kv_cache_spec_kind,
     * kv_cache_spec_sliding_window, locality, ownership} (nil placeholders keep later slots in place), read by
     * slot where the type fits and by type where an older producer left slots out. An array in a store's tail is
     * Dynamo's {@code block_mm_infos} (it takes no slot). An integer in the locality slot is ROCm ATOM's
     * {@code token_offset}, which does not change any hash. Anything past the five is ignored. vLLM's own
     * {@code BlockRemoved} declares a shorter tail, {@code group_idx, locality, ownership}: a removal's second slot
     * holding {@code LOCAL} or {@code REMOTE} is that locality, and a string after it that ownership.
     */
    private void tail(int index, boolean store) throws IOException, EventDecodeException {
        if (index >= 5) {
            cursor.skip();
            return;
        }
        ValueType type = cursor.peekType();
        if (type == ValueType.ARRAY && store) {
            multimodal.blockMmInfos();
            return;
        }
        int slot = fields.tailSlot++;
        switch (type) {
            case NIL -> cursor.skipNil();
            case INTEGER -> {
                boolean unsigned = cursor.nextIsUint64();
                long v = cursor.rawLong();
                if (fields.groupIdx == null && slot <= 1 && (unsigned || v >= 0)) {
                    fields.groupIdx = v; // a later integer (sliding window, token_offset) has no effect
                }
            }
            case STRING -> {
                String value = cursor.string("tail");
                if (!store && slot == 1 && (value.equals("LOCAL") || value.equals("REMOTE"))) {
                    slot = 3; // vLLM's own removal: group_idx, locality, ownership
                } else if (!store && slot == 2 && fields.locality != null) {
                    slot = 4;
                }
                switch (slot) {
                    case 3 -> fields.locality = value;
                    case 4 -> fields.ownership = value;
                    default -> {
                        if (fields.specKind == null) {
                            fields.specKind = value;
                        }
                    }
                }
            }
            default -> cursor.skip();
        }
    }

    /** {@code {"type": tag, ...}}: by key, in any order, unknown keys ignored. */
    private Tag mapEvent() throws IOException, EventDecodeException {
        String leading = cursor.peekLeadingTypeTag(TAGS);
        Tag tag = tagOf(leading != null ? leading : findMapTag());
        int n = cursor.mapHeader("event");
        for (int i = 0; i < n; i++) {
            if (cursor.peekType() != ValueType.STRING) {
                cursor.skip(); // a non-string key cannot name a field we know
                cursor.skip();
                continue;
            }
            String key = cursor.knownString("key", KEYS);
            switch (tag) {
                case STORED, REMOVED -> mapField(tag, key);
                case CLEARED -> {
                    if (key.equals("ownership")) {
                        fields.ownership = read.optionalString("ownership");
                    } else {
                        cursor.skip();
                    }
                }
                default -> cursor.skip();
            }
        }
        return requireFields(tag, -1);
    }

    /** Reads {@code type} ahead of the main cursor, since map keys may come in any order. */
    private String findMapTag() throws IOException, EventDecodeException {
        try (MsgpackCursor ahead = new MsgpackCursor(payload, cursor.position(), cursor.end(), where)) {
            int n = ahead.mapHeader("event");
            for (int i = 0; i < n; i++) {
                if (ahead.stringEquals("key", "type")) {
                    if (ahead.peekType() != ValueType.STRING) {
                        throw new EventDecodeException(
                                BAD_EVENT, where.get() + ": type: expected a string, got " + ahead.peekType());
                    }
                    return ahead.string("type");
                }
                ahead.skip();
            }
        }
        throw new EventDecodeException(BAD_EVENT, where.get() + ": map event has no \"type\" key");
    }

    private void mapField(Tag tag, String key) throws IOException, EventDecodeException {
        switch (key) {
            case "block_hashes" -> fields.blockHashes = read.hashes("block_hashes");
            case "medium" -> fields.medium = read.optionalString("medium");
            case "group_idx" -> read.groupIdx();
            case "kv_cache_spec_kind" -> fields.specKind = read.optionalString("kv_cache_spec_kind");
            case "locality" -> fields.locality = read.optionalString("locality");
            case "ownership" -> fields.ownership = read.optionalString("ownership");
            default -> {
                if (tag == Tag.STORED) {
                    storedMapField(key);
                } else {
                    cursor.skip();
                }
            }
        }
    }

    private void storedMapField(String key) throws IOException, EventDecodeException {
        switch (key) {
            case "parent_block_hash" -> read.parent();
            case "token_ids" -> read.tokens();
            case "block_size" -> read.blockSize();
            case "lora_name" -> fields.loraName = read.optionalString("lora_name");
            case "lora_id" -> read.loraId();
            case "extra_keys" -> multimodal.extraKeys();
            case "mm_keys" -> multimodal.mmKeys();
            case "block_mm_infos" -> {
                if (cursor.peekType() == ValueType.NIL) {
                    cursor.skipNil();
                } else {
                    multimodal.blockMmInfos();
                }
            }
            case "cache_salt" -> salt();
            default -> cursor.skip(); // sliding window, token_offset, session_id, ...
        }
    }

    /** A {@code cache_salt} value: a string is the salt; anything else is ignored, as before salts were read. */
    private void salt() throws IOException, EventDecodeException {
        if (cursor.peekType() == ValueType.STRING) {
            fields.cacheSalt = cursor.string("cache_salt");
        } else {
            cursor.skip();
        }
    }

    /** SGLang's metadata map in the {@code lora_name} slot: its {@code cache_salt}, other keys ignored. */
    private void saltMap() throws IOException, EventDecodeException {
        int n = cursor.mapHeader("metadata");
        for (int i = 0; i < n; i++) {
            if (cursor.stringEquals("key", "cache_salt")) { // (consumes the key either way)
                salt();
            } else {
                cursor.skip();
            }
        }
    }

    /** Checks the required fields; {@code arrayLength} is -1 for a map event. */
    private Tag requireFields(Tag tag, int arrayLength) throws EventDecodeException {
        if (tag == Tag.STORED || tag == Tag.REMOVED) {
            require(fields.blockHashes != null, "block_hashes", arrayLength);
        }
        if (tag == Tag.STORED) {
            require(fields.tokenIds != null, "token_ids", arrayLength);
            require(fields.blockSize >= 0, "block_size", arrayLength);
        }
        return tag;
    }

    private void require(boolean present, String field, int arrayLength) throws EventDecodeException {
        if (!present) {
            throw new EventDecodeException(
                    BAD_EVENT,
                    where.get() + ": missing required field " + field
                            + (arrayLength >= 0 ? " (array event has only " + arrayLength + " elements)" : ""));
        }
    }
}
