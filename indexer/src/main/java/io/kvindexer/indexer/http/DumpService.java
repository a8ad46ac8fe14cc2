package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonGenerator;
import io.kvindexer.indexer.event.RouterEvent;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code GET /dump} (spec §5.8): every index as {@code "model:tenant": {block_size, model_name, tenant_id, events}},
 * streamed. Pending writes are flushed first so the dump shows everything accepted before the request. The
 * {@code model_name}/{@code tenant_id} fields let peers recover model names that contain {@code :} (design §2).
 */
final class DumpService implements HttpService {

    private static final long FLUSH_TIMEOUT_SECONDS = 30;

    private final Indexers indexers;

    DumpService(Indexers indexers) {
        this.indexers = indexers;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.get("/dump", this::dump);
    }

    private void dump(ServerRequest req, ServerResponse res) throws Exception {
        indexers.flushAll().get(FLUSH_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        List<ModelIndex> all = indexers.all();
        JsonOut.stream(res, g -> {
            g.writeStartObject();
            for (ModelIndex ix : all) {
                g.writeObjectFieldStart(ix.modelName() + ":" + ix.tenantId());
                g.writeFieldName("block_size");
                g.writeNumber(Integer.toUnsignedString(ix.blockSize()));
                g.writeStringField("model_name", ix.modelName());
                g.writeStringField("tenant_id", ix.tenantId());
                g.writeArrayFieldStart("events");
                for (RouterEvent e : ix.dump()) {
                    writeEvent(g, e);
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeEndObject();
        });
    }

    /** Dynamo's RouterEvent JSON, fields in its order (spec §5.8). */
    static void writeEvent(JsonGenerator g, RouterEvent e) throws IOException {
        g.writeStartObject();
        JsonOut.u64Field(g, "worker_id", e.workerId());
        g.writeStringField("storage_tier", e.tier().jsonName());
        g.writeObjectFieldStart("event");
        JsonOut.u64Field(g, "event_id", e.eventId());
        g.writeFieldName("data");
        switch (e.data()) {
            case RouterEvent.Stored s -> {
                g.writeStartObject();
                g.writeObjectFieldStart("stored");
                if (s.hasParent()) {
                    JsonOut.u64Field(g, "parent_hash", s.parentHash());
                } else {
                    g.writeNullField("parent_hash");
                }
                g.writeNullField("start_position");
                g.writeArrayFieldStart("blocks");
                for (int i = 0; i < s.blockHashes().length; i++) {
                    g.writeStartObject();
                    JsonOut.u64Field(g, "block_hash", s.blockHashes()[i]);
                    JsonOut.u64Field(g, "tokens_hash", s.tokensHashes()[i]);
                    g.writeNullField("mm_extra_info");
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
                g.writeEndObject();
            }
            case RouterEvent.Removed r -> {
                g.writeStartObject();
                g.writeObjectFieldStart("removed");
                g.writeArrayFieldStart("block_hashes");
                for (long h : r.blockHashes()) {
                    g.writeNumber(Long.toUnsignedString(h));
                }
                g.writeEndArray();
                g.writeEndObject();
                g.writeEndObject();
            }
            case RouterEvent.Cleared c -> g.writeString("cleared");
        }
        g.writeFieldName("dp_rank");
        g.writeNumber(Integer.toUnsignedString(e.dpRank()));
        g.writeEndObject();
        g.writeEndObject();
    }
}
