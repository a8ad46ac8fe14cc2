package io.kvindexer.indexer.event;

import io.kvindexer.indexer.model.StorageTier;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import org.msgpack.core.MessageInsufficientBufferException;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageSizeException;
import org.msgpack.value.ValueType;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;

/**
 * Decodes one msgpack payload of an engine's KV-event stream into a {@link KvEventBatch}.
 * Stateless and thread-safe.
 *
 * <p>Accepts every encoding in the wire spec (§3, §4, §5): the envelope {@code [ts, events, rank?, ...]} with
 * 2 or more elements; events as tagged arrays (vLLM ≤ 0.23, SGLang; read by position with length guards, extra
 * elements ignored) or tagged maps (newer vLLM, SGLang, TensorRT-LLM; keys in any order, unknown keys ignored),
 * mixed in one batch. Differences from Dynamo G2, on purpose (design.md §2): block hashes may be {@code bin}
 * digests; an unknown event tag skips that event and is counted instead of failing the batch.
 *
 * <p>Trailing bytes after the envelope are an error ({@code bad_envelope}): an engine payload is exactly one
 * msgpack value, so anything after it means a framing fault, and indexing a damaged batch is worse than
 * re-syncing it.
 *
 * <p>Every failure is an {@link EventDecodeException} whose {@link EventDecodeException#kind() kind} is one of
 * {@code empty_payload, not_msgpack, truncated, bad_envelope, bad_event, bad_hash, bad_token, malformed}.
 */
public final class EngineEventDecoder {

    /** Attention kinds whose events describe the main (full-attention) KV cache (spec §2.5). */
    private static final Set<String> MAIN_ATTENTION_KINDS =
            Set.of("full_attention", "mla_attention", "sink_full_attention");

    private static final Hasher64 MM_IDENTIFIER_HASH = Hashing.xxh3_64(0L);

    private enum Tag { STORED, REMOVED, CLEARED, IGNORED, UNKNOWN }

    public KvEventBatch decode(byte[] payload) throws EventDecodeException {
        if (payload == null || payload.length == 0) {
            throw new EventDecodeException("empty_payload", "empty payload");
        }
        Reader reader = new Reader(payload);
        try (MsgpackCursor cursor = reader.cursor) {
            return reader.batch();
        } catch (MessageInsufficientBufferException e) {
            throw new EventDecodeException("truncated", reader.where() + ": payload ends in the middle of a value", e);
        } catch (MessageSizeException e) {
            throw new EventDecodeException("truncated", reader.where() + ": declared length too large", e);
        } catch (MessagePackException e) {
            throw new EventDecodeException("not_msgpack", reader.where() + ": " + e.getMessage(), e);
        } catch (IOException e) {
            throw new EventDecodeException("not_msgpack", reader.where() + ": " + e, e);
        } catch (RuntimeException e) {
            // a defect of ours on some odd input must not take the listener down: report it as a bad payload
            throw new EventDecodeException("malformed", reader.where() + ": " + e, e);
        }
    }

    /** The state of one {@link #decode} call. */
    private static final class Reader {

        final byte[] payload;
        final MsgpackCursor cursor;
        int eventIndex = -1;
        String tagName;

        // the event being read; reset per event
        long[] blockHashes;
        boolean hasParent;
        long parentHash;
        int[] tokenIds;
        boolean eagle;
        int blockSize;
        String medium;
        String loraName;
        List<List<ExtraKey>> extraKeys;
        boolean hasGroupIdx;
        long groupIdx;
        String specKind;

        Reader(byte[] payload) {
            this.payload = payload;
            this.cursor = new MsgpackCursor(payload, 0, this::where);
        }

        String where() {
            return eventIndex < 0 ? "envelope" : "event " + eventIndex + (tagName == null ? "" : " (" + tagName + ")");
        }

        KvEventBatch batch() throws IOException, EventDecodeException {
            if (cursor.peekType() != ValueType.ARRAY) {
                throw new EventDecodeException("bad_envelope",
                        "envelope: expected an array [ts, events, data_parallel_rank], got " + cursor.peekType());
            }
            int fields = cursor.arrayHeader("array");
            if (fields < 2) {
                throw new EventDecodeException("bad_envelope",
                        "envelope: expected at least 2 elements [ts, events], got " + fields);
            }
            double ts = timestamp();
            if (cursor.peekType() != ValueType.ARRAY) {
                throw new EventDecodeException("bad_envelope", "envelope: events: expected an array, got "
                        + cursor.peekType());
            }
            int count = cursor.arrayHeader("events");
            List<KvEvent> events = new ArrayList<>(count);
            int unknown = 0;
            int ignored = 0;
            for (int i = 0; i < count; i++) {
                eventIndex = i;
                tagName = null;
                Tag tag = event();
                KvEvent decoded = switch (tag) {
                    case STORED -> mainGroup() ? stored() : null;
                    case REMOVED -> mainGroup() ? new BlockRemoved(blockHashes, StorageTier.fromMedium(medium)) : null;
                    case CLEARED -> new AllBlocksCleared();
                    case IGNORED, UNKNOWN -> null;
                };
                if (decoded != null) {
                    events.add(decoded);
                } else if (tag == Tag.UNKNOWN) {
                    unknown++;
                } else {
                    ignored++;
                }
            }
            eventIndex = -1;
            tagName = null;
            Integer rank = fields >= 3 ? rank() : null;
            for (int i = 3; i < fields; i++) {
                cursor.skip();
            }
            if (cursor.hasNext()) {
                throw new EventDecodeException("bad_envelope",
                        "envelope: " + cursor.remaining() + " trailing bytes after the batch");
            }
            return new KvEventBatch(ts, Collections.unmodifiableList(events), rank, unknown, ignored);
        }

        private double timestamp() throws IOException, EventDecodeException {
            return switch (cursor.peekType()) {
                case FLOAT -> cursor.floatValue();
                case INTEGER -> cursor.nextIsUint64()
                        ? unsignedToDouble(cursor.rawLong())
                        : (double) cursor.rawLong();
                default -> throw new EventDecodeException("bad_envelope",
                        "envelope: ts: expected a number, got " + cursor.peekType());
            };
        }

        private Integer rank() throws IOException, EventDecodeException {
            ValueType type = cursor.peekType();
            if (type == ValueType.NIL) {
                cursor.skipNil();
                return null;
            }
            if (type != ValueType.INTEGER) {
                throw new EventDecodeException("bad_envelope",
                        "envelope: data_parallel_rank: expected an integer or nil, got " + type);
            }
            boolean huge = cursor.nextIsUint64();
            long v = cursor.rawLong();
            if (huge || v < Integer.MIN_VALUE || v > 0xFFFF_FFFFL) {
                throw new EventDecodeException("bad_envelope", "envelope: data_parallel_rank: "
                        + (huge ? Long.toUnsignedString(v) : Long.toString(v)) + " is out of the 32-bit range");
            }
            return (int) v; // i32 or u32, kept as the 32-bit pattern
        }

        // ---- one event ----

        private Tag event() throws IOException, EventDecodeException {
            blockHashes = null;
            hasParent = false;
            parentHash = 0;
            tokenIds = null;
            eagle = false;
            blockSize = -1;
            medium = null;
            loraName = null;
            extraKeys = null;
            hasGroupIdx = false;
            groupIdx = 0;
            specKind = null;
            return switch (cursor.peekType()) {
                case ARRAY -> arrayEvent();
                case MAP -> mapEvent();
                default -> throw new EventDecodeException("bad_event",
                        where() + ": expected a tagged array or map, got " + cursor.peekType());
            };
        }

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

        /** {@code [tag, f1, f2, ...]}: by position (wire spec §3.4, §4; behaviour spec §2.4). */
        private Tag arrayEvent() throws IOException, EventDecodeException {
            int n = cursor.arrayHeader("event");
            if (n == 0) {
                throw new EventDecodeException("bad_event", where() + ": empty event array has no tag");
            }
            if (cursor.peekType() != ValueType.STRING) {
                throw new EventDecodeException("bad_event",
                        where() + ": tag: expected a string, got " + cursor.peekType());
            }
            Tag tag = tagOf(cursor.string("tag"));
            for (int pos = 1; pos < n; pos++) {
                switch (tag) {
                    case STORED -> storedPosition(pos);
                    case REMOVED -> removedPosition(pos);
                    default -> cursor.skip();
                }
            }
            return requireFields(tag, n);
        }

        private void storedPosition(int pos) throws IOException, EventDecodeException {
            switch (pos) {
                case 1 -> blockHashes = hashes("block_hashes");
                case 2 -> parent();
                case 3 -> tokens();
                case 4 -> blockSize();
                case 5 -> cursor.skip(); // lora_id: deprecated, not part of the hash key
                case 6 -> medium = optionalString("medium");
                case 7 -> {
                    // vLLM: lora_name; an SGLang build may put a metadata map ({cache_salt}) here
                    if (cursor.peekType() == ValueType.MAP) {
                        cursor.skip();
                    } else {
                        loraName = optionalString("lora_name");
                    }
                }
                case 8 -> extraKeys();
                default -> tail();
            }
        }

        private void removedPosition(int pos) throws IOException, EventDecodeException {
            switch (pos) {
                case 1 -> blockHashes = hashes("block_hashes");
                case 2 -> medium = optionalString("medium");
                default -> tail();
            }
        }

        /**
         * Positional tail after the declared fields (behaviour spec §2.4, G2): classified by type. An unsigned int is
         * {@code group_idx} (vLLM's later sliding-window int then has no effect), a string is
         * {@code kv_cache_spec_kind}; arrays (Dynamo's block_mm_infos), nil and anything else are skipped.
         */
        private void tail() throws IOException, EventDecodeException {
            ValueType type = cursor.peekType();
            if (type == ValueType.INTEGER) {
                boolean unsigned = cursor.nextIsUint64();
                long v = cursor.rawLong();
                if (!hasGroupIdx && (unsigned || v >= 0)) {
                    hasGroupIdx = true;
                    groupIdx = v;
                }
            } else if (type == ValueType.STRING && specKind == null) {
                specKind = cursor.string("kv_cache_spec_kind");
            } else {
                cursor.skip();
            }
        }

        /** {@code {"type": tag, ...}}: by key, in any order, unknown keys ignored. */
        private Tag mapEvent() throws IOException, EventDecodeException {
            Tag tag = tagOf(findMapTag());
            int n = cursor.mapHeader("event");
            for (int i = 0; i < n; i++) {
                if (cursor.peekType() != ValueType.STRING) {
                    cursor.skip(); // a non-string key cannot name a field we know
                    cursor.skip();
                    continue;
                }
                String key = cursor.string("key");
                if (tag == Tag.STORED || tag == Tag.REMOVED) {
                    mapField(tag, key);
                } else {
                    cursor.skip();
                }
            }
            return requireFields(tag, -1);
        }

        /** Reads {@code type} ahead of the main cursor, since map keys may come in any order. */
        private String findMapTag() throws IOException, EventDecodeException {
            try (MsgpackCursor ahead = new MsgpackCursor(payload, cursor.position(), this::where)) {
                int n = ahead.mapHeader("event");
                for (int i = 0; i < n; i++) {
                    if (ahead.stringEquals("key", "type")) {
                        if (ahead.peekType() != ValueType.STRING) {
                            throw new EventDecodeException("bad_event",
                                    where() + ": type: expected a string, got " + ahead.peekType());
                        }
                        return ahead.string("type");
                    }
                    ahead.skip();
                }
            }
            throw new EventDecodeException("bad_event", where() + ": map event has no \"type\" key");
        }

        private void mapField(Tag tag, String key) throws IOException, EventDecodeException {
            switch (key) {
                case "block_hashes" -> blockHashes = hashes("block_hashes");
                case "medium" -> medium = optionalString("medium");
                case "group_idx" -> groupIdx();
                case "kv_cache_spec_kind" -> specKind = optionalString("kv_cache_spec_kind");
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
                case "parent_block_hash" -> parent();
                case "token_ids" -> tokens();
                case "block_size" -> blockSize();
                case "lora_name" -> loraName = optionalString("lora_name");
                case "extra_keys" -> extraKeys();
                default -> cursor.skip(); // lora_id, block_mm_infos, sliding window, locality, session_id, ...
            }
        }

        /** Checks the required fields; {@code arrayLength} is -1 for a map event. */
        private Tag requireFields(Tag tag, int arrayLength) throws EventDecodeException {
            if (tag == Tag.STORED || tag == Tag.REMOVED) {
                require(blockHashes != null, "block_hashes", arrayLength);
            }
            if (tag == Tag.STORED) {
                require(tokenIds != null, "token_ids", arrayLength);
                require(blockSize >= 0, "block_size", arrayLength);
            }
            return tag;
        }

        private void require(boolean present, String field, int arrayLength) throws EventDecodeException {
            if (!present) {
                throw new EventDecodeException("bad_event", where() + ": missing required field " + field
                        + (arrayLength >= 0 ? " (array event has only " + arrayLength + " elements)" : ""));
            }
        }

        // ---- fields ----

        private long[] hashes(String field) throws IOException, EventDecodeException {
            if (cursor.peekType() != ValueType.ARRAY) {
                throw new EventDecodeException("bad_event",
                        where() + ": " + field + ": expected an array, got " + cursor.peekType());
            }
            int n = cursor.arrayHeader(field);
            long[] out = new long[n];
            for (int i = 0; i < n; i++) {
                out[i] = hash(field, i);
            }
            return out;
        }

        private long hash(String field, int index) throws IOException, EventDecodeException {
            return switch (cursor.peekType()) {
                case INTEGER -> cursor.rawLong();
                case BINARY -> cursor.binaryAsLong(field);
                default -> throw new EventDecodeException("bad_hash", where() + ": " + field
                        + (index >= 0 ? "[" + index + "]" : "") + ": expected an integer or bin, got "
                        + cursor.peekType());
            };
        }

        private void parent() throws IOException, EventDecodeException {
            if (cursor.peekType() == ValueType.NIL) {
                cursor.skipNil();
                hasParent = false;
                parentHash = 0;
            } else {
                parentHash = hash("parent_block_hash", -1);
                hasParent = true;
            }
        }

        /** u32 token ids, or EAGLE bigram pairs flattened to {@code [a0, a1, ..., a_last, b_last]}. */
        private void tokens() throws IOException, EventDecodeException {
            if (cursor.peekType() != ValueType.ARRAY) {
                throw new EventDecodeException("bad_event",
                        where() + ": token_ids: expected an array, got " + cursor.peekType());
            }
            int n = cursor.arrayHeader("token_ids");
            eagle = n > 0 && cursor.peekType() == ValueType.ARRAY;
            int[] out = new int[eagle ? n + 1 : n];
            for (int i = 0; i < n; i++) {
                if (!eagle) {
                    out[i] = token(i);
                    continue;
                }
                if (cursor.peekType() != ValueType.ARRAY) {
                    throw new EventDecodeException("bad_token", where() + ": token_ids[" + i
                            + "]: expected a [token, token] pair like the first entry, got " + cursor.peekType());
                }
                int pairLength = cursor.arrayHeader("token_ids pair");
                if (pairLength != 2) {
                    throw new EventDecodeException("bad_token", where() + ": token_ids[" + i
                            + "]: expected a pair, got " + pairLength + " elements");
                }
                out[i] = token(i);
                int second = token(i);
                if (i == n - 1) {
                    out[n] = second;
                }
            }
            tokenIds = out;
        }

        private int token(int index) throws IOException, EventDecodeException {
            if (cursor.peekType() != ValueType.INTEGER) {
                throw new EventDecodeException("bad_token", where() + ": token_ids[" + index
                        + "]: expected an integer, got " + cursor.peekType());
            }
            boolean huge = cursor.nextIsUint64();
            long v = cursor.rawLong();
            if (huge || v < 0 || v > 0xFFFF_FFFFL) {
                throw new EventDecodeException("bad_token", where() + ": token_ids[" + index + "]: "
                        + (huge ? Long.toUnsignedString(v) : Long.toString(v)) + " is not a u32 token id");
            }
            return (int) v;
        }

        private void blockSize() throws IOException, EventDecodeException {
            if (cursor.peekType() != ValueType.INTEGER) {
                throw new EventDecodeException("bad_event",
                        where() + ": block_size: expected an integer, got " + cursor.peekType());
            }
            boolean huge = cursor.nextIsUint64();
            long v = cursor.rawLong();
            if (huge || v < 0 || v > Integer.MAX_VALUE) {
                throw new EventDecodeException("bad_event", where() + ": block_size: "
                        + (huge ? Long.toUnsignedString(v) : Long.toString(v)) + " is out of range");
            }
            blockSize = (int) v;
        }

        private void groupIdx() throws IOException, EventDecodeException {
            switch (cursor.peekType()) {
                case NIL -> cursor.skipNil();
                case INTEGER -> {
                    hasGroupIdx = true;
                    groupIdx = cursor.rawLong();
                }
                default -> throw new EventDecodeException("bad_event",
                        where() + ": group_idx: expected an integer or nil, got " + cursor.peekType());
            }
        }

        private String optionalString(String field) throws IOException, EventDecodeException {
            return switch (cursor.peekType()) {
                case NIL -> {
                    cursor.skipNil();
                    yield null;
                }
                case STRING -> cursor.string(field);
                default -> throw new EventDecodeException("bad_event",
                        where() + ": " + field + ": expected a string or nil, got " + cursor.peekType());
            };
        }

        /**
         * {@code extra_keys}: per block, nil or a list of items. Strings and {@code [identifier, offset, ...]}
         * tuples are kept for {@link #mmHashes()}; other items (prompt-embedding bytes, typed structs) are skipped.
         */
        private void extraKeys() throws IOException, EventDecodeException {
            ValueType type = cursor.peekType();
            if (type == ValueType.NIL) {
                cursor.skipNil();
                extraKeys = null;
                return;
            }
            if (type != ValueType.ARRAY) {
                throw new EventDecodeException("bad_event",
                        where() + ": extra_keys: expected an array or nil, got " + type);
            }
            int blocks = cursor.arrayHeader("extra_keys");
            List<List<ExtraKey>> perBlock = new ArrayList<>(blocks);
            for (int b = 0; b < blocks; b++) {
                if (cursor.peekType() != ValueType.ARRAY) {
                    cursor.skip(); // nil: no extra keys for this block
                    perBlock.add(null);
                    continue;
                }
                int items = cursor.arrayHeader("extra_keys entry");
                List<ExtraKey> keys = new ArrayList<>(Math.min(items, 8));
                for (int i = 0; i < items; i++) {
                    ValueType itemType = cursor.peekType();
                    if (itemType == ValueType.STRING) {
                        keys.add(new ExtraKey(cursor.string("extra_keys entry"), false));
                    } else if (itemType == ValueType.ARRAY) {
                        int len = cursor.arrayHeader("extra_keys entry");
                        int consumed = 0;
                        if (len > 0 && cursor.peekType() == ValueType.STRING) {
                            keys.add(new ExtraKey(cursor.string("extra_keys entry"), true));
                            consumed = 1;
                        }
                        for (int k = consumed; k < len; k++) {
                            cursor.skip();
                        }
                    } else {
                        cursor.skip();
                    }
                }
                perBlock.add(keys);
            }
            extraKeys = perBlock;
        }

        // ---- building the model ----

        /** Attention-group filter (spec §2.5, G2). */
        private boolean mainGroup() {
            if (specKind != null) {
                return MAIN_ATTENTION_KINDS.contains(specKind);
            }
            return !hasGroupIdx || groupIdx == 0;
        }

        private BlockStored stored() {
            String lora = loraName == null || loraName.isEmpty() ? null : loraName;
            return new BlockStored(blockHashes, hasParent, parentHash, tokenIds, blockSize, lora,
                    StorageTier.fromMedium(medium), mmHashes(lora), eagle);
        }

        /**
         * Multimodal hashes per block from {@code extra_keys} (spec §1.2): a 64-hex-char identifier is the u64 of its
         * first 16 hex chars; a tuple identifier that is not canonical hex is XXH3-64 of its UTF-8 bytes (seed 0);
         * other bare strings (cache salt, LoRA name) are not multimodal. Null when no block has any.
         */
        private long[][] mmHashes(String lora) {
            if (extraKeys == null) {
                return null;
            }
            long[][] out = null;
            int blocks = Math.min(extraKeys.size(), blockHashes.length);
            for (int b = 0; b < blocks; b++) {
                List<ExtraKey> keys = extraKeys.get(b);
                if (keys == null || keys.isEmpty()) {
                    continue;
                }
                long[] hashes = new long[keys.size()];
                int count = 0;
                for (ExtraKey key : keys) {
                    if (!key.tuple() && key.text().equals(lora)) {
                        continue;
                    }
                    if (isCanonicalHex(key.text())) {
                        hashes[count++] = Long.parseUnsignedLong(key.text(), 0, 16, 16);
                    } else if (key.tuple()) {
                        hashes[count++] = MM_IDENTIFIER_HASH.hashBytesToLong(
                                key.text().getBytes(StandardCharsets.UTF_8));
                    }
                }
                if (count > 0) {
                    if (out == null) {
                        out = new long[blockHashes.length][];
                    }
                    out[b] = count == hashes.length ? hashes : Arrays.copyOf(hashes, count);
                }
            }
            return out;
        }

        private static boolean isCanonicalHex(String s) {
            if (s.length() != 64) {
                return false;
            }
            for (int i = 0; i < 64; i++) {
                char c = s.charAt(i);
                if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')) {
                    return false;
                }
            }
            return true;
        }

        private static double unsignedToDouble(long v) {
            return v >= 0 ? v : (double) (v >>> 1) * 2.0;
        }
    }

    /** One {@code extra_keys} item: a bare string, or the identifier of an {@code [identifier, offset]} tuple. */
    private record ExtraKey(String text, boolean tuple) {
    }
}
