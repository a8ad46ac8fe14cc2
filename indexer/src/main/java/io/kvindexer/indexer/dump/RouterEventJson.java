package io.kvindexer.indexer.dump;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.json.JsonIntegers;
import io.kvindexer.indexer.json.JsonTokens;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;

/**
 * The JSON form of a {@link RouterEvent} (compatibility.md, HTTP API), written and read with Jackson's streaming API.
 *
 * <p>Writing follows Dynamo's field order exactly: {@code worker_id, storage_tier, event{event_id, data, dp_rank}};
 * every u64 is an unsigned decimal number, never quoted. Reading is tolerant: unknown fields are ignored,
 * {@code start_position} may be absent (G1), {@code storage_tier} defaults to device, {@code dp_rank} and
 * {@code event_id} to 0; numbers up to 2^64−1 are read unsigned and negative ones as two's complement.
 */
public final class RouterEventJson {

    /**
     * A stored block's last-store time in a {@code /dump} (epoch millis): ours, not Dynamo's, which ignores it as it
     * ignores any field it does not know in a block.
     */
    static final String LAST_STORE_MS = "last_store_ms";

    /** Shared, thread-safe factory for every JSON stream of the event model. */
    static final JsonFactory FACTORY = JsonFactory.builder().build();

    private RouterEventJson() {}

    public static String toJson(RouterEvent event) {
        StringWriter out = new StringWriter();
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            write(g, event);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        return out.toString();
    }

    public static RouterEvent fromJson(String json) throws EventJsonException {
        try (JsonParser p = FACTORY.createParser(json)) {
            p.nextToken();
            RouterEvent event = read(p, "");
            if (p.nextToken() != null) {
                throw new EventJsonException("unexpected content after the RouterEvent");
            }
            return event;
        } catch (JsonProcessingException e) {
            throw invalidJson(e);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // reading a String does not fail
        }
    }

    public static void write(JsonGenerator g, RouterEvent event) throws IOException {
        g.writeStartObject();
        g.writeFieldName("worker_id");
        writeU64(g, event.instanceId());
        g.writeStringField("storage_tier", event.tier().jsonName());
        g.writeFieldName("event");
        g.writeStartObject();
        g.writeFieldName("event_id");
        writeU64(g, event.eventId());
        g.writeFieldName("data");
        writeData(g, event.data());
        g.writeFieldName("dp_rank");
        g.writeNumber(Integer.toUnsignedString(event.dpRank()));
        g.writeEndObject();
        g.writeEndObject();
    }

    private static void writeData(JsonGenerator g, RouterEvent.Data data) throws IOException {
        switch (data) {
            case RouterEvent.Stored s -> {
                if (s.blockHashes().length != s.localHashes().length) {
                    throw new IllegalArgumentException("stored event with " + s.blockHashes().length
                            + " block hashes but " + s.localHashes().length + " tokens hashes");
                }
                g.writeStartObject();
                g.writeFieldName("stored");
                g.writeStartObject();
                g.writeFieldName("parent_hash");
                if (s.hasParent()) {
                    writeU64(g, s.parentBlockHash());
                } else {
                    g.writeNull();
                }
                g.writeNullField("start_position");
                g.writeFieldName("blocks");
                g.writeStartArray();
                for (int i = 0; i < s.blockHashes().length; i++) {
                    g.writeStartObject();
                    g.writeFieldName("block_hash");
                    writeU64(g, s.blockHashes()[i]);
                    g.writeFieldName("tokens_hash");
                    writeU64(g, s.localHashes()[i]);
                    g.writeNullField("mm_extra_info");
                    if (s.lastStoreMillis() != null && s.lastStoreMillis()[i] != RouterEvent.Stored.NO_TIME) {
                        g.writeNumberField(LAST_STORE_MS, s.lastStoreMillis()[i]);
                    }
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
                g.writeEndObject();
            }
            case RouterEvent.Removed r -> {
                g.writeStartObject();
                g.writeFieldName("removed");
                g.writeStartObject();
                g.writeFieldName("block_hashes");
                writeU64Array(g, r.blockHashes());
                g.writeEndObject();
                g.writeEndObject();
            }
            case RouterEvent.Cleared c -> g.writeString("cleared");
        }
    }

    static void writeU64(JsonGenerator g, long value) throws IOException {
        g.writeNumber(Long.toUnsignedString(value));
    }

    private static void writeU64Array(JsonGenerator g, long[] values) throws IOException {
        g.writeStartArray();
        for (long v : values) {
            writeU64(g, v);
        }
        g.writeEndArray();
    }

    // ---- reading ----

    /**
     * Reads one RouterEvent; the parser's current token is its {@code START_OBJECT}, and is left on the matching
     * {@code END_OBJECT}. {@code path} prefixes field names in error messages (e.g. {@code "llama:default.events[3]."}).
     */
    public static RouterEvent read(JsonParser p, String path) throws IOException, EventJsonException {
        expect(p, JsonToken.START_OBJECT, path.isEmpty() ? "RouterEvent" : trimDot(path), "an object");
        Long workerId = null;
        StorageTier tier = StorageTier.DEVICE;
        boolean sawEvent = false;
        long eventId = 0;
        int dpRank = 0;
        RouterEvent.Data data = null;
        for (String field; (field = nextField(p)) != null; ) {
            switch (field) {
                case "worker_id" -> workerId = readU64(p, path + "worker_id");
                case "storage_tier" -> tier = readTier(p, path + "storage_tier");
                case "event" -> {
                    sawEvent = true;
                    String eventPath = path + "event.";
                    expect(p, JsonToken.START_OBJECT, eventPath + "event", "an object");
                    for (String inner; (inner = nextField(p)) != null; ) {
                        switch (inner) {
                            case "event_id" -> eventId = readU64(p, eventPath + "event_id");
                            case "dp_rank" -> dpRank = readU32(p, eventPath + "dp_rank");
                            case "data" -> data = readData(p, eventPath + "data");
                            default -> p.skipChildren();
                        }
                    }
                }
                default -> p.skipChildren();
            }
        }
        if (workerId == null) {
            throw new EventJsonException(path + "worker_id: missing");
        }
        if (!sawEvent) {
            throw new EventJsonException(path + "event: missing");
        }
        if (data == null) {
            throw new EventJsonException(path + "event.data: missing");
        }
        return new RouterEvent(workerId, dpRank, tier, eventId, data);
    }

    private static StorageTier readTier(JsonParser p, String path) throws IOException, EventJsonException {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            return StorageTier.DEVICE;
        }
        expect(p, JsonToken.VALUE_STRING, path, "a string");
        StorageTier tier = StorageTier.fromJsonName(p.getText());
        if (tier == null) {
            throw new EventJsonException(path + ": unknown storage tier \"" + p.getText() + "\"");
        }
        return tier;
    }

    private static RouterEvent.Data readData(JsonParser p, String path) throws IOException, EventJsonException {
        if (p.currentToken() == JsonToken.VALUE_STRING) {
            if ("cleared".equals(p.getText())) {
                return new RouterEvent.Cleared();
            }
            throw new EventJsonException(path + ": unknown event kind \"" + p.getText() + "\"");
        }
        expect(p, JsonToken.START_OBJECT, path, "\"cleared\" or an object {\"stored\"|\"removed\": ...}");
        RouterEvent.Data data = null;
        for (String kind; (kind = nextField(p)) != null; ) {
            if (data != null) {
                throw new EventJsonException(path + ": more than one event kind (" + kind + ")");
            }
            data = switch (kind) {
                case "stored" -> readStored(p, path + ".stored");
                case "removed" -> readRemoved(p, path + ".removed");
                case "cleared" -> {
                    p.skipChildren();
                    yield new RouterEvent.Cleared();
                }
                default -> throw new EventJsonException(path + ": unknown event kind \"" + kind + "\"");
            };
        }
        if (data == null) {
            throw new EventJsonException(path + ": empty object, expected stored, removed or cleared");
        }
        return data;
    }

    private static RouterEvent.Stored readStored(JsonParser p, String path) throws IOException, EventJsonException {
        expect(p, JsonToken.START_OBJECT, path, "an object");
        boolean hasParent = false;
        long parent = 0;
        long[] blockHashes = null;
        long[] tokensHashes = null;
        long[] lastStores = null;
        for (String field; (field = nextField(p)) != null; ) {
            switch (field) {
                case "parent_hash" -> {
                    hasParent = p.currentToken() != JsonToken.VALUE_NULL;
                    parent = hasParent ? readU64(p, path + ".parent_hash") : 0;
                }
                case "blocks" -> {
                    String blocksPath = path + ".blocks";
                    expect(p, JsonToken.START_ARRAY, blocksPath, "an array");
                    LongArrayList blocks = new LongArrayList();
                    LongArrayList tokens = new LongArrayList();
                    LongArrayList times = null; // only once a block has one
                    int i = 0;
                    while (p.nextToken() != JsonToken.END_ARRAY) {
                        String blockPath = blocksPath + "[" + i++ + "]";
                        expect(p, JsonToken.START_OBJECT, blockPath, "an object");
                        Long block = null;
                        Long tokensHash = null;
                        long time = RouterEvent.Stored.NO_TIME;
                        for (String name; (name = nextField(p)) != null; ) {
                            switch (name) {
                                case "block_hash" -> block = readU64(p, blockPath + ".block_hash");
                                case "tokens_hash" -> tokensHash = readU64(p, blockPath + ".tokens_hash");
                                case LAST_STORE_MS -> time = readEpochMillis(p, blockPath + "." + LAST_STORE_MS);
                                default -> p.skipChildren(); // mm_extra_info: not used by the index
                            }
                        }
                        if (block == null || tokensHash == null) {
                            throw new EventJsonException(
                                    blockPath + "." + (block == null ? "block_hash" : "tokens_hash") + ": missing");
                        }
                        if (time != RouterEvent.Stored.NO_TIME && times == null) {
                            times = new LongArrayList();
                            for (int k = 0; k < blocks.size(); k++) {
                                times.add(RouterEvent.Stored.NO_TIME); // the blocks before it had none
                            }
                        }
                        if (times != null) {
                            times.add(time);
                        }
                        blocks.add(block.longValue());
                        tokens.add(tokensHash.longValue());
                    }
                    blockHashes = blocks.toLongArray();
                    tokensHashes = tokens.toLongArray();
                    lastStores = times == null ? null : times.toLongArray();
                }
                default -> p.skipChildren(); // start_position and later additions
            }
        }
        if (blockHashes == null) {
            throw new EventJsonException(path + ".blocks: missing");
        }
        return new RouterEvent.Stored(hasParent, parent, blockHashes, tokensHashes, lastStores);
    }

    /**
     * An epoch-millis time, signed. Any value is taken: block expiry counts one in the future as now and a very old
     * one as long expired, as it does a binary dump's; {@code null} is no time.
     */
    private static long readEpochMillis(JsonParser p, String path) throws IOException, EventJsonException {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            return RouterEvent.Stored.NO_TIME;
        }
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            throw new EventJsonException(path + ": expected epoch milliseconds (a 64-bit integer), got "
                    + (p.currentToken() == JsonToken.VALUE_NUMBER_INT
                            ? p.getText()
                            : JsonTokens.describe(p.currentToken())));
        }
        long v = p.getLongValue();
        // NO_TIME itself would read as "no time": the oldest time there is, long expired either way
        return v == RouterEvent.Stored.NO_TIME ? v + 1 : v;
    }

    private static RouterEvent.Removed readRemoved(JsonParser p, String path) throws IOException, EventJsonException {
        expect(p, JsonToken.START_OBJECT, path, "an object");
        long[] hashes = null;
        for (String field; (field = nextField(p)) != null; ) {
            if (field.equals("block_hashes")) {
                String hashesPath = path + ".block_hashes";
                expect(p, JsonToken.START_ARRAY, hashesPath, "an array");
                LongArrayList list = new LongArrayList();
                int i = 0;
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    list.add(readU64(p, hashesPath + "[" + i++ + "]"));
                }
                hashes = list.toLongArray();
            } else {
                p.skipChildren();
            }
        }
        if (hashes == null) {
            throw new EventJsonException(path + ".block_hashes: missing");
        }
        return new RouterEvent.Removed(hashes);
    }

    /** The next field's name with the parser on its value, or null at the end of the object. */
    static String nextField(JsonParser p) throws IOException {
        if (p.nextToken() != JsonToken.FIELD_NAME) {
            return null;
        }
        String name = p.currentName();
        p.nextToken();
        return name;
    }

    /** An integer in [−2^63, 2^64): values above 2^63−1 read as unsigned, negative ones as two's complement. */
    static long readU64(JsonParser p, String path) throws IOException, EventJsonException {
        if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
            throw new EventJsonException(
                    path + ": expected an unsigned 64-bit integer, got " + JsonTokens.describe(p.currentToken()));
        }
        if (!JsonIntegers.fits64(p)) {
            throw new EventJsonException(path + ": " + p.getText() + " is outside the 64-bit range");
        }
        return JsonIntegers.bits64(p);
    }

    static int readU32(JsonParser p, String path) throws IOException, EventJsonException {
        long v = readU64(p, path);
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER || v < Integer.MIN_VALUE || v > 0xFFFF_FFFFL) {
            throw new EventJsonException(path + ": " + p.getText() + " is outside the 32-bit range");
        }
        return (int) v;
    }

    static void expect(JsonParser p, JsonToken token, String path, String what) throws EventJsonException {
        if (p.currentToken() != token) {
            throw new EventJsonException(
                    path + ": expected " + what + ", got " + JsonTokens.describe(p.currentToken()));
        }
    }

    static EventJsonException invalidJson(JsonProcessingException e) {
        var at = e.getLocation();
        return new EventJsonException(
                "invalid JSON: " + JsonTokens.problem(e)
                        + (at == null ? "" : " (line " + at.getLineNr() + ", column " + at.getColumnNr() + ")"),
                e);
    }

    private static String trimDot(String path) {
        return path.endsWith(".") ? path.substring(0, path.length() - 1) : path;
    }
}
