package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonGenerator;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.kvindexer.indexer.recovery.StartupGate;
import io.helidon.webserver.http.HttpRules;
import io.helidon.webserver.http.HttpService;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;

import java.io.IOException;
import java.util.Map;

/**
 * {@code /query} and {@code /query_by_hash} (spec §5.6–5.7): 404 for an unknown (model, tenant), 503 until the
 * startup gate is open (design §2: never a silently empty answer while recovering).
 */
final class QueryService implements HttpService {

    private final Indexers indexers;
    private final StartupGate gate;
    private final IndexerMetrics metrics;
    private final long maxBody;

    private int maxTokens = io.kvindexer.indexer.ServiceLimits.DEFAULTS.maxQueryTokens();

    QueryService(Indexers indexers, StartupGate gate, IndexerMetrics metrics, long maxBody, int maxTokens) {
        this(indexers, gate, metrics, maxBody);
        this.maxTokens = maxTokens;
    }

    QueryService(Indexers indexers, StartupGate gate, IndexerMetrics metrics, long maxBody) {
        this.indexers = indexers;
        this.gate = gate;
        this.metrics = metrics;
        this.maxBody = maxBody;
    }

    @Override
    public void routing(HttpRules rules) {
        rules.post("/query", this::query)
                .post("/query_by_hash", this::queryByHash);
    }

    private void query(ServerRequest req, ServerResponse res) {
        Requests.Query q;
        try (JsonBody body = JsonBody.open(req, maxBody)) {
            q = Requests.query(body);
        }
        tokenLimit("token_ids", q.tokenIds().length);
        ModelIndex index = index(q.modelName(), q.tenantId());
        long start = System.nanoTime();
        long[] hashes = index.localHashes(q.tokenIds(), q.loraName(), q.cacheSalt());
        OverlapScores scores = OverlapScores.of(index.findMatches(hashes), index.blockSize());
        metrics.queryMatched("/query", (System.nanoTime() - start) / 1e9);
        JsonOut.send(res, 200, g -> write(g, scores));
    }

    private void queryByHash(ServerRequest req, ServerResponse res) {
        Requests.HashQuery q;
        try (JsonBody body = JsonBody.open(req, maxBody)) {
            q = Requests.queryByHash(body);
        }
        tokenLimit("block_hashes", q.blockHashes().length);
        ModelIndex index = index(q.modelName(), q.tenantId());
        long start = System.nanoTime();
        OverlapScores scores = OverlapScores.of(index.findMatches(q.blockHashes()), index.blockSize());
        metrics.queryMatched("/query_by_hash", (System.nanoTime() - start) / 1e9);
        JsonOut.send(res, 200, g -> write(g, scores));
    }

    private void tokenLimit(String field, int n) {
        if (n > maxTokens) {
            throw new ApiError(413, "`" + field + "` has " + n + " entries; the limit is " + maxTokens
                    + " (--max-query-tokens)");
        }
    }

    private ModelIndex index(String model, String tenant) {
        if (!gate.isOpen()) {
            throw new ApiError(503, "indexer is not ready: " + gate.reason());
        }
        return indexers.get(model, tenant)
                .orElseThrow(() -> new ApiError(404, "no indexer for model=" + model + " tenant=" + tenant));
    }

    /** {@code {"scores":{id:{dp:tokens}},"frequencies":[],"instances":{id:{...}}}}; ids as unsigned decimals. */
    static void write(JsonGenerator g, OverlapScores s) throws IOException {
        g.writeStartObject();
        g.writeObjectFieldStart("scores");
        for (Map.Entry<Long, Map<Integer, Long>> e : s.scores().entrySet()) {
            g.writeObjectFieldStart(Long.toUnsignedString(e.getKey()));
            for (Map.Entry<Integer, Long> r : e.getValue().entrySet()) {
                g.writeNumberField(Integer.toUnsignedString(r.getKey()), r.getValue());
            }
            g.writeEndObject();
        }
        g.writeEndObject();
        g.writeArrayFieldStart("frequencies");
        g.writeEndArray();
        g.writeObjectFieldStart("instances");
        for (Map.Entry<Long, OverlapScores.InstanceTiers> e : s.instances().entrySet()) {
            OverlapScores.InstanceTiers t = e.getValue();
            g.writeObjectFieldStart(Long.toUnsignedString(e.getKey()));
            g.writeNumberField("longest_matched", t.longestMatched());
            g.writeNumberField("gpu", t.gpu());
            g.writeObjectFieldStart("dp");
            for (Map.Entry<Integer, Long> r : t.dp().entrySet()) {
                g.writeNumberField(Integer.toUnsignedString(r.getKey()), r.getValue());
            }
            g.writeEndObject();
            g.writeNumberField("cpu", t.cpu());
            g.writeNumberField("disk", t.disk());
            g.writeEndObject();
        }
        g.writeEndObject();
        g.writeEndObject();
    }
}
