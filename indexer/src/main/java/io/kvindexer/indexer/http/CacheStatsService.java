package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonGenerator;
import io.helidon.common.parameters.Parameters;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.Tenants;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.CacheSurvey;
import io.kvindexer.indexer.index.IndexStats;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import java.io.IOException;
import java.util.List;

/**
 * The console's view of how the cache is spread: {@code GET /stats} (every index's size and the blocks each worker
 * holds per tier) and {@code GET /prefixes} (the most shared prefixes of one index). Both are bounded walks of
 * {@link CacheSurvey}; neither waits for the startup gate (watching a recovery is part of what they are for).
 */
record CacheStatsService(Indexers indexers) implements ApiService {

    static final int DEFAULT_LIMIT = 20;
    static final int MAX_LIMIT = 1000;

    @Override
    public void routes(Routes routes) {
        routes.get("/stats", Routes.Access.OPEN, this::stats)
                // names blocks and their holders: index content, like /dump
                .get("/prefixes", Routes.Access.TOKEN, this::prefixes);
    }

    private void stats(ServerRequest req, ServerResponse res) {
        Parameters query = req.query();
        String model = QueryParameters.single(query, "model_name").orElse(null);
        String tenant = QueryParameters.single(query, "tenant_id").orElse(null);
        boolean perWorker = QueryParameters.flag(query, "workers", true);
        List<ModelIndex> selected = indexers.all().stream()
                .filter(ix -> model == null || ix.modelName().equals(model))
                .filter(ix -> tenant == null || ix.tenantId().equals(tenant))
                .toList();
        JsonOut.send(res, 200, g -> {
            g.writeStartObject();
            g.writeArrayFieldStart("indexes");
            for (ModelIndex ix : selected) {
                IndexStats s = ix.stats();
                // without the per-worker counts this is O(1) per index: what a page polling every few seconds needs
                List<CacheSurvey.WorkerBlocks> workers = perWorker ? ix.survey().workerBlocks() : List.of();
                g.writeStartObject();
                g.writeStringField("model_name", ix.modelName());
                g.writeStringField("tenant_id", ix.tenantId());
                g.writeNumberField("block_size", ix.blockSize());
                g.writeNumberField("blocks", s.blocks());
                g.writeNumberField("memberships", s.memberships());
                if (!perWorker) {
                    g.writeEndObject();
                    continue;
                }
                g.writeArrayFieldStart("workers");
                for (CacheSurvey.WorkerBlocks w : workers) {
                    g.writeStartObject();
                    writeWorker(g, w.worker());
                    g.writeObjectFieldStart("blocks");
                    for (StorageTier t : StorageTier.values()) {
                        g.writeNumberField(t.jsonName(), w.blocks(t));
                    }
                    g.writeEndObject();
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        });
    }

    private void prefixes(ServerRequest req, ServerResponse res) {
        Parameters query = req.query();
        String model = QueryParameters.single(query, "model_name")
                .orElseThrow(() -> new ApiError(400, "missing query parameter `model_name`"));
        String tenant = QueryParameters.single(query, "tenant_id").orElse(Tenants.DEFAULT);
        int limit = limit(QueryParameters.single(query, "limit").orElse(null));
        ModelIndex ix = indexers.get(model, tenant).orElseThrow(() -> ApiError.noIndexer(model, tenant));
        List<CacheSurvey.SharedPrefix> prefixes = ix.survey().sharedPrefixes(limit);
        JsonOut.send(res, 200, g -> {
            g.writeStartObject();
            g.writeStringField("model_name", ix.modelName());
            g.writeStringField("tenant_id", ix.tenantId());
            g.writeNumberField("block_size", ix.blockSize());
            g.writeArrayFieldStart("prefixes");
            for (CacheSurvey.SharedPrefix p : prefixes) {
                g.writeStartObject();
                g.writeNumberField("depth", p.depth());
                g.writeNumberField("tokens", (long) p.depth() * ix.blockSize());
                g.writeNumberField("workers", p.workers());
                JsonOut.u64Field(g, "block_hash", p.blockHash());
                g.writeArrayFieldStart("holders");
                for (WorkerKey w : p.holders()) {
                    g.writeStartObject();
                    writeWorker(g, w);
                    g.writeEndObject();
                }
                g.writeEndArray();
                g.writeEndObject();
            }
            g.writeEndArray();
            g.writeEndObject();
        });
    }

    private static int limit(String text) {
        if (text == null) {
            return DEFAULT_LIMIT;
        }
        try {
            int limit = Integer.parseInt(text);
            if (limit >= 1 && limit <= MAX_LIMIT) {
                return limit;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw new ApiError(
                400, "query parameter `limit` must be an integer from 1 to " + MAX_LIMIT + ", got `" + text + "`");
    }

    private static void writeWorker(JsonGenerator g, WorkerKey w) throws IOException {
        JsonOut.u64Field(g, "instance_id", w.instanceId());
        g.writeFieldName("dp_rank");
        g.writeNumber(Integer.toUnsignedString(w.dpRank()));
    }
}
