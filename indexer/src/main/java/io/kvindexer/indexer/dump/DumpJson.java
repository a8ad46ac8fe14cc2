package io.kvindexer.indexer.dump;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The {@code /dump} document (compatibility.md, HTTP API), streamed in both directions so that a large index never
 * becomes one String:
 * <pre>
 * { "llama:default": { "block_size": 16, "model_name": "llama", "tenant_id": "default", "events": [ ... ] }, ... }
 * </pre>
 * {@code model_name} and {@code tenant_id} are our addition (compatibility.md, Where we differ on purpose): Dynamo peers only have the key, which
 * they split at the first {@code ':'}, so a model name containing {@code ':'} would not survive recovery.
 */
public final class DumpJson {

    private DumpJson() {}

    /** Writes a whole dump document to {@code out}; the stream is flushed, not closed. */
    public static void write(OutputStream out, Collection<IndexDump> dumps) throws IOException {
        try (Writer writer = writer(out)) {
            for (IndexDump dump : dumps) {
                writer.entry(dump);
            }
        }
    }

    /** A writer for a dump document built entry by entry; {@link Writer#close()} ends the document. */
    public static Writer writer(OutputStream out) throws IOException {
        return new Writer(out);
    }

    /** Streams one {@code /dump} document: {@link #entry} or {@link #error} per index, then {@link #close}. */
    public static final class Writer implements Closeable {

        private final JsonGenerator g;

        private Writer(OutputStream out) throws IOException {
            g = RouterEventJson.FACTORY
                    .createGenerator(out, JsonEncoding.UTF8)
                    .disable(JsonGenerator.Feature.AUTO_CLOSE_TARGET);
            g.writeStartObject();
        }

        public void entry(IndexDump dump) throws IOException {
            begin(dump.modelName(), dump.tenantId(), dump.blockSize());
            for (RouterEvent event : dump.events()) {
                event(event);
            }
            end();
        }

        /** Opens an index's entry, whose events follow one by one ({@link #event}) until {@link #end}. */
        public void begin(String modelName, String tenantId, int blockSize) throws IOException {
            g.writeFieldName(modelName + ":" + tenantId);
            g.writeStartObject();
            g.writeNumberField("block_size", blockSize);
            g.writeStringField("model_name", modelName);
            g.writeStringField("tenant_id", tenantId);
            g.writeFieldName("events");
            g.writeStartArray();
        }

        public void event(RouterEvent event) throws IOException {
            RouterEventJson.write(g, event);
        }

        public void end() throws IOException {
            g.writeEndArray();
            g.writeEndObject();
        }

        /**
         * Ends an entry begun with {@link #begin} whose walk failed: the events written so far, then {@code "error"}
         * (a reader refuses the entry, as it refuses Dynamo's {@code {"error": ...}}).
         */
        public void abandon(String message) throws IOException {
            g.writeEndArray();
            g.writeStringField("error", message);
            g.writeEndObject();
        }

        /** The entry of an index whose dump failed: {@code "key": {"error": "..."}} (as Dynamo writes it). */
        public void error(String key, String message) throws IOException {
            g.writeFieldName(key);
            g.writeStartObject();
            g.writeStringField("error", message);
            g.writeEndObject();
        }

        @Override
        public void close() throws IOException {
            g.writeEndObject();
            g.close(); // flushes; the target stays open
        }
    }

    /**
     * Receives a dump document entry by entry, event by event, so that reading one never holds it whole (a Dynamo
     * peer's dump of a million memberships is about 270 MB of JSON).
     */
    public interface Entries {

        /**
         * An entry's events begin. {@code block_size} precedes {@code events} in ours and in Dynamo's dumps; in one
         * where it does not, that entry's events are held until it is read.
         *
         * @return where the entry's events go, in order
         */
        EventSink begin(String key, int blockSize);

        /** The entry has ended; its names resolved from the key and the name fields (see {@link #read}). */
        void end(String key, String modelName, String tenantId, int blockSize) throws EventJsonException;
    }

    /** An entry's events, one at a time. */
    @FunctionalInterface
    public interface EventSink {
        void event(RouterEvent event) throws EventJsonException;
    }

    /**
     * Reads a whole dump document (ours or a Dynamo peer's) into memory. Fails on the first unusable entry, naming
     * its key: an {@code {"error": ...}} entry, a key without {@code ':'} and without name fields, or a malformed
     * event. The stream is not closed.
     */
    public static List<IndexDump> read(InputStream in) throws IOException, EventJsonException {
        List<IndexDump> dumps = new ArrayList<>();
        List<RouterEvent> events = new ArrayList<>();
        read(in, new Entries() {
            @Override
            public EventSink begin(String key, int blockSize) {
                events.clear();
                return events::add;
            }

            @Override
            public void end(String key, String modelName, String tenantId, int blockSize) {
                dumps.add(new IndexDump(modelName, tenantId, blockSize, events));
            }
        });
        return dumps;
    }

    /** {@link #read(InputStream)}, handing each entry's events to {@code entries} as they are parsed. */
    public static void read(InputStream in, Entries entries) throws IOException, EventJsonException {
        try (JsonParser p = RouterEventJson.FACTORY.createParser(in)) {
            p.disable(JsonParser.Feature.AUTO_CLOSE_SOURCE);
            p.nextToken();
            RouterEventJson.expect(p, JsonToken.START_OBJECT, "dump", "an object keyed \"model:tenant\"");
            for (String key; (key = RouterEventJson.nextField(p)) != null; ) {
                readEntry(p, key, entries);
            }
            if (p.nextToken() != null) {
                throw new EventJsonException("dump: unexpected content after the document");
            }
        } catch (JsonProcessingException e) {
            throw RouterEventJson.invalidJson(e);
        }
    }

    private static void readEntry(JsonParser p, String key, Entries entries) throws IOException, EventJsonException {
        String path = "dump entry \"" + key + "\"";
        RouterEventJson.expect(p, JsonToken.START_OBJECT, path, "an object");
        Integer blockSize = null;
        String modelName = null;
        String tenantId = null;
        boolean hadEvents = false;
        List<RouterEvent> held = null; // events read before block_size
        for (String field; (field = RouterEventJson.nextField(p)) != null; ) {
            switch (field) {
                case "error" ->
                    throw new EventJsonException(path + ": the peer failed to dump this index: "
                            + (p.currentToken() == JsonToken.VALUE_STRING ? p.getText() : describeSkipping(p)));
                case "block_size" -> {
                    if (blockSize != null) {
                        throw new EventJsonException(path + ": block_size: given twice");
                    }
                    long v = RouterEventJson.readU64(p, path + ": block_size");
                    if (v < 0 || v > Integer.MAX_VALUE) {
                        throw new EventJsonException(path + ": block_size: " + p.getText() + " is out of range");
                    }
                    blockSize = (int) v;
                    if (held != null) {
                        EventSink sink = entries.begin(key, blockSize);
                        for (RouterEvent e : held) {
                            sink.event(e);
                        }
                        held = null;
                    }
                }
                case "model_name" -> modelName = optionalString(p, path + ": model_name");
                case "tenant_id" -> tenantId = optionalString(p, path + ": tenant_id");
                case "events" -> {
                    if (hadEvents) {
                        throw new EventJsonException(path + ": events: given twice");
                    }
                    hadEvents = true;
                    RouterEventJson.expect(p, JsonToken.START_ARRAY, path + ": events", "an array");
                    EventSink sink;
                    if (blockSize != null) {
                        sink = entries.begin(key, blockSize);
                    } else {
                        held = new ArrayList<>();
                        sink = held::add;
                    }
                    for (int n = 0; p.nextToken() != JsonToken.END_ARRAY; n++) {
                        sink.event(RouterEventJson.read(p, key + ".events[" + n + "]."));
                    }
                }
                default -> p.skipChildren();
            }
        }
        if (blockSize == null) {
            throw new EventJsonException(path + ": block_size: missing");
        }
        if (!hadEvents) {
            throw new EventJsonException(path + ": events: missing");
        }
        String[] names = names(key, modelName, tenantId);
        if (names == null) {
            throw new EventJsonException(path + ": the key has no ':' and the entry has no model_name/tenant_id");
        }
        entries.end(key, names[0], names[1], blockSize);
    }

    /**
     * Model and tenant of an entry: the explicit fields win; otherwise the key is split at its first ':' as Dynamo
     * does; one explicit field pins the split when the key starts or ends with it. Null when nothing works.
     */
    private static String[] names(String key, String modelName, String tenantId) {
        if (modelName != null && tenantId != null) {
            return new String[] {modelName, tenantId};
        }
        if (modelName != null && key.startsWith(modelName + ":")) {
            return new String[] {modelName, key.substring(modelName.length() + 1)};
        }
        if (tenantId != null && key.endsWith(":" + tenantId)) {
            return new String[] {key.substring(0, key.length() - tenantId.length() - 1), tenantId};
        }
        int colon = key.indexOf(':');
        if (colon < 0) {
            return null;
        }
        return new String[] {
            modelName != null ? modelName : key.substring(0, colon),
            tenantId != null ? tenantId : key.substring(colon + 1)
        };
    }

    private static String optionalString(JsonParser p, String path) throws IOException, EventJsonException {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            return null;
        }
        RouterEventJson.expect(p, JsonToken.VALUE_STRING, path, "a string");
        return p.getText();
    }

    private static String describeSkipping(JsonParser p) throws IOException {
        String text = p.currentToken() == null ? "" : p.currentToken().toString();
        p.skipChildren();
        return text;
    }
}
