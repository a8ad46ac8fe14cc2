package io.kvindexer.indexer.http;

import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.MatchResult;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.kvindexer.indexer.recovery.StartupGate;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@code /query}, {@code /query_by_hash} and {@code /query_tiered_by_hash} ({@code docs/compatibility.md}): 404 for
 * an unknown (model, tenant), 503 until the startup gate is open (never a silently empty answer while recovering).
 * Bodies are JSON or msgpack ({@link MsgpackBody}); the first two answer msgpack when asked ({@link MsgpackOut}).
 *
 * @param facts     pod name and exactness per instance (shown as {@code instances[id].pod_name} and {@code .exact})
 * @param accessLog told the model of each query; null without {@code --access-log}
 */
record QueryService(
        Indexers indexers,
        StartupGate gate,
        IndexerMetrics metrics,
        long maxBody,
        int maxTokens,
        InstanceFacts facts,
        AccessLog accessLog)
        implements ApiService {

    @Override
    public void routes(Routes routes) {
        routes.post("/query", Routes.Access.OPEN, this::query)
                .post("/query_by_hash", Routes.Access.OPEN, this::queryByHash)
                .post("/query_tiered_by_hash", Routes.Access.OPEN, this::queryTieredByHash);
    }

    private void query(ServerRequest req, ServerResponse res) {
        boolean msgpack = MsgpackBody.isMsgpack(req);
        boolean msgpackAnswer = MsgpackOut.wanted(req, msgpack); // a 406 comes before the body is read
        OverlapScores scores = read(req, msgpack, Requests::query, q -> {
            tokenLimit("token_ids", q.tokenIds().remaining());
            ModelIndex index = index(req, q.modelName(), q.tenantId());
            return timedMatch(
                    "/query",
                    index,
                    () -> index.localHashes(q.tokenIds(), q.loraName(), q.cacheSalt(), q.eagle()),
                    OverlapScores::of);
        });
        answer(res, msgpackAnswer, scores);
    }

    private void queryByHash(ServerRequest req, ServerResponse res) {
        boolean msgpack = MsgpackBody.isMsgpack(req);
        boolean msgpackAnswer = MsgpackOut.wanted(req, msgpack); // a 406 comes before the body is read
        answer(res, msgpackAnswer, matchByHash(req, msgpack, "/query_by_hash", OverlapScores::of));
    }

    /** Dynamo's tiered query for a remote primary: the same request as {@code /query_by_hash}, counts in blocks. */
    private void queryTieredByHash(ServerRequest req, ServerResponse res) {
        TieredScores tiered = matchByHash(req, MsgpackBody.isMsgpack(req), "/query_tiered_by_hash", TieredScores::of);
        JsonOut.send(res, 200, g -> tiered.writeJson(g, facts.exact()));
    }

    /** The two by-hash routes: the same request, the match shaped by {@code shape}. */
    private <S> S matchByHash(
            ServerRequest req, boolean msgpack, String route, BiFunction<MatchResult, Integer, S> shape) {
        Requests.HashQuery q = read(req, msgpack, Requests::queryByHash, Function.identity());
        if (q.cacheSalt() != null && indexers.mixCacheSalt()) {
            // Dynamo G3's answer: the hashes were computed by the caller, salt and all
            throw ApiError.badJson("cache_salt is not accepted by " + route
                    + "; block_hashes must already include the intended cache salt");
        }
        tokenLimit("block_hashes", q.localHashes().length);
        return timedMatch(route, index(req, q.modelName(), q.tenantId()), q::localHashes, shape);
    }

    /** Hashes (when {@code localHashes} does), matches and shapes the answer, all inside the route's match timer. */
    private <S> S timedMatch(
            String route, ModelIndex index, Supplier<long[]> localHashes, BiFunction<MatchResult, Integer, S> shape) {
        long start = System.nanoTime();
        S scores = shape.apply(index.findMatches(localHashes.get()), index.blockSize());
        metrics.queryMatched(route, (System.nanoTime() - start) / 1e9);
        return scores;
    }

    private void tokenLimit(String field, int n) {
        if (n > maxTokens) {
            throw new ApiError(
                    413, "`" + field + "` has " + n + " entries; the limit is " + maxTokens + " (--max-query-tokens)");
        }
    }

    /** The (model, tenant)'s index, once the gate is open; the model goes into the request's access-log record. */
    private ModelIndex index(ServerRequest req, String model, String tenant) {
        AccessLog.model(accessLog, req, model);
        if (!gate.isOpen()) {
            throw new ApiError(503, "indexer is not ready: " + gate.reason());
        }
        return indexers.get(model, tenant).orElseThrow(() -> ApiError.noIndexer(model, tenant));
    }

    /**
     * Decodes the body as msgpack when it says so, else as JSON (which refuses any other content type with 415):
     * read whole, then straight from its bytes when flat ({@link FlatJsonBody}), else by {@link JsonBody}; then
     * {@code use} runs on the request while the body's bytes are still held (msgpack token ids are a view of them).
     */
    private <T, R> R read(ServerRequest req, boolean msgpack, Function<RequestFields, T> decode, Function<T, R> use) {
        try (RequestBody.Bytes body = RequestBody.readAll(req, maxBody, msgpack ? "msgpack" : "json")) {
            T request = msgpack
                    ? decode.apply(MsgpackBody.of(body.array(), body.length()))
                    : FlatJsonBody.decode(body.array(), body.length(), decode);
            return use.apply(request);
        }
    }

    private void answer(ServerResponse res, boolean msgpack, OverlapScores scores) {
        if (msgpack) {
            MsgpackOut.send(res, 200, p -> OverlapScoresWriter.msgpack(p, scores, facts));
        } else {
            JsonOut.send(res, 200, g -> OverlapScoresWriter.json(g, scores, facts));
        }
    }
}
