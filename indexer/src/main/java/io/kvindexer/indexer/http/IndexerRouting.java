package io.kvindexer.indexer.http;

import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.kvindexer.indexer.recovery.StartupGate;
import io.kvindexer.indexer.registry.PeerRegistry;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.registry.WorkerRegistry;
import io.helidon.http.Status;
import io.helidon.webserver.http.HttpRouting;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The whole HTTP API as one routing table, built by a static method that the server and the tests share.
 * Domain errors are mapped to status + {@code {"error": ...}} here, once; every path answers 405 for a method it
 * does not serve, anything else 404.
 */
public final class IndexerRouting {

    private static final System.Logger LOG = System.getLogger(IndexerRouting.class.getName());

    /** What the routes work on. */
    public record Components(IndexerConfig config, WorkerRegistry workers, PeerRegistry peers, Indexers indexers,
                             StartupGate gate, IndexerMetrics metrics) {
    }

    private IndexerRouting() {
    }

    public static void routing(HttpRouting.Builder routing, Components c) {
        IndexerConfig cfg = c.config();
        List<String> paths = new ArrayList<>(List.of("/health", "/ready", "/metrics", "/register", "/unregister",
                "/workers", "/query", "/query_by_hash", "/dump", "/register_peer", "/deregister_peer", "/peers", "/openapi.yaml"));
        paths.addAll(List.of("/stats", "/prefixes", "/ui", "/ui/")); // the web console (ConsoleService, CacheStatsService)
        if (cfg.testEndpoints()) {
            paths.add("/test/pause_listener");
            paths.add("/test/resume_listener");
        }
        Set<String> known = Set.copyOf(paths);
        routing.addFilter(new RequestMetricsFilter(c.metrics(), known));
        routing.addFilter(BodyDeadline.filter(cfg.limits().requestReadTimeout()));
        if (cfg.authToken() != null) {
            routing.addFilter(new BearerAuth(cfg.authToken()));
        }
        routing.register(new HealthService(c.gate()),
                        new MetricsService(c.metrics()),
                        new WorkerService(c.workers(), cfg.maxBodyBytes()),
                        new QueryService(c.indexers(), c.gate(), c.metrics(), cfg.maxQueryBodyBytes(),
                                cfg.limits().maxQueryTokens()),
                        new DumpService(c.indexers()),
                        new PeerService(c.peers(), cfg.maxBodyBytes(), cfg.limits().maxPeers()),
                        new OpenApiService());
        routing.register(new CacheStatsService(c.indexers()), new ConsoleService());
        if (cfg.testEndpoints()) {
            LOG.log(System.Logger.Level.WARNING, "DYN_KV_INDEXER_TEST_ENDPOINTS is on: /test/* routes are mounted");
            routing.register(new ListenerControlService(c.workers(), cfg.maxBodyBytes()));
        }
        for (String p : paths) {
            routing.any(p, (req, res) -> res.status(Status.METHOD_NOT_ALLOWED_405).send());
        }
        routing.any((req, res) -> res.status(Status.NOT_FOUND_404).send());

        routing.error(ApiError.class, (req, res, e) -> JsonOut.error(res, e.status(), e.getMessage()))
                .error(RegistryException.class, (req, res, e) -> JsonOut.error(res, switch (e.kind()) {
                    case INVALID -> 400;
                    case NOT_FOUND -> 404;
                    case CONFLICT -> 409;
                }, e.getMessage()))
                // a client that declared more body than it sent, then closed: its fault, not ours
                .error(io.helidon.common.buffers.DataReader.InsufficientDataAvailableException.class,
                        (req, res, e) -> JsonOut.error(res, 400, "request body ended before its declared length"))
                .error(Exception.class, (req, res, e) -> {
                    LOG.log(System.Logger.Level.ERROR, "request " + req.prologue().uriPath().path() + " failed", e);
                    JsonOut.error(res, 500, "internal error: " + e);
                });
    }
}
