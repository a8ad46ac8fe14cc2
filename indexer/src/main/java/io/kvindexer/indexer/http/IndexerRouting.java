package io.kvindexer.indexer.http;

import io.helidon.common.socket.SocketOptions;
import io.helidon.http.DirectHandler;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.WebServerConfig;
import io.helidon.webserver.http.DirectHandlers;
import io.helidon.webserver.http.HttpRouting;
import io.helidon.webserver.http1.Http1Config;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.metrics.IndexerMetrics;
import io.kvindexer.indexer.recovery.StartupGate;
import io.kvindexer.indexer.registry.PeerRegistry;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.registry.WorkerRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The whole HTTP API as one routing table, built by a static method that the server and the tests share.
 * The paths, methods and access of every endpoint come from the services' declarations in one {@link Routes}
 * table; the filters (metrics, body deadline, bearer token) and the 405/404 answers derive from it.
 */
public final class IndexerRouting {

    private static final System.Logger LOG = System.getLogger(IndexerRouting.class.getName());

    /**
     * What the routes work on.
     *
     * @param accessLog the {@code --access-log} file; null: none
     * @param tracing   request spans; null: none
     */
    public record Components(
            HttpSettings config,
            WorkerRegistry workers,
            PeerRegistry peers,
            Indexers indexers,
            StartupGate gate,
            IndexerMetrics metrics,
            AccessLog accessLog,
            RequestTracing tracing) {}

    private IndexerRouting() {}

    public static void routing(HttpRouting.Builder routing, Components c) {
        HttpSettings cfg = c.config();
        Routes routes = routes(c);
        // first: records the 401s too, and its span (with spans) is current for everything after it
        routing.addFilter(new RequestRecorder(c.metrics(), routes, c.accessLog(), c.tracing()));
        routing.addFilter(BodyDeadline.filter(cfg.limits().requestReadTimeout()));
        routing.addFilter(BodyFraming.filter());
        routing.addFilter(RequestCodings.filter()); // after BodyFraming, which closes the connection of its 415
        routing.addFilter((chain, req, res) -> {
            // a stop is coming (--shutdown-delay): each answer closes its connection, so that a keep-alive client
            // opens its next one to a replica that stays
            if (c.gate().isShuttingDown()) {
                res.header(HeaderValues.CONNECTION_CLOSE);
            }
            chain.proceed();
        });
        if (cfg.bearerTokens() != null) {
            routing.addFilter(new BearerAuth(cfg.bearerTokens(), routes));
        }
        routes.mount(routing);
        errors(routing);
    }

    /** The route table of every service the config mounts. */
    public static Routes routes(Components c) {
        HttpSettings cfg = c.config();
        List<ApiService> services = new ArrayList<>(List.of(
                new HealthService(c.gate(), c.workers()),
                new MetricsService(c.metrics()),
                new WorkerService(c.workers(), cfg.maxBodyBytes(), c.accessLog()),
                new QueryService(
                        c.indexers(),
                        c.gate(),
                        c.metrics(),
                        cfg.maxQueryBodyBytes(),
                        cfg.limits().maxQueryTokens(),
                        new InstanceFacts(c.workers()::podName, c.workers()::exact),
                        c.accessLog()),
                new DumpService(
                        c.indexers(),
                        c.workers(),
                        c.gate(),
                        new DumpSlots(
                                cfg.limits().maxConcurrentDumps(), cfg.limits().dumpStallTimeout())),
                new PeerService(c.peers(), cfg.maxBodyBytes(), cfg.limits().maxPeers(), cfg.host()),
                new OpenApiService(),
                new CacheStatsService(c.indexers()),
                new AccessLogService(c.accessLog()),
                new ConsoleService()));
        if (cfg.testEndpoints()) {
            LOG.log(System.Logger.Level.WARNING, "DYN_KV_INDEXER_TEST_ENDPOINTS is on: /test/* routes are mounted");
            services.add(new ListenerControlService(c.workers(), cfg.maxBodyBytes()));
        }
        return Routes.of(services);
    }

    /** Helidon's own payload limit: only a backstop, the routes answer 413 with a JSON body at their own limits. */
    public static long maxPayloadSize(HttpSettings cfg) {
        return Math.max(cfg.maxQueryBodyBytes(), cfg.maxBodyBytes()) * 2;
    }

    /**
     * What the server answers by itself, before any route (a request line, header or percent-escape it cannot
     * parse, a body over {@link #maxPayloadSize}): the API's {@code {"error": ...}} with Helidon's reason (which it
     * leaves out unless asked: our answers are JSON, escaped, never HTML), instead of an empty body. An internal
     * error's text stays in the log.
     */
    public static void serverAnswers(WebServerConfig.Builder server, HttpSettings cfg) {
        server.maxPayloadSize(maxPayloadSize(cfg))
                .contentEncoding(new RequestCodings())
                .directHandlers(directHandlers())
                .errorHandling(e -> e.includeEntity(true));
    }

    /**
     * Bounds the time to read a request's head (Helidon reads it with no limit): the server's one HTTP/1 protocol,
     * whose reads start {@link BodyDeadline}'s clock at a request line's first bytes ({@link TimedHttp1}) and whose
     * receive listener follows the request line and headers. Protocol discovery is off, as with the discovered HTTP/1
     * protocol beside this one an HTTP/1.0 request was closed without its 505 ({@code SlowHeadersTest}). Not in
     * {@link #serverAnswers}: Helidon's test server then drops that 505 too.
     */
    public static void headerDeadline(WebServerConfig.Builder server, HttpSettings cfg) {
        Duration timeout = cfg.limits().requestReadTimeout();
        server.protocolsDiscoverServices(false)
                .addConnectionSelector(TimedHttp1.of(
                        Http1Config.builder()
                                // a GET naming the longest model and tenant (256 characters each, up to 12 bytes
                                // apiece percent-encoded) needs over 6 KiB of request line; Helidon allows 4
                                .maxPrologueLength(8 * 1024) // a longer request line is a 414
                                .addReceiveListener(BodyDeadline.headerListener(timeout))
                                .build(),
                        timeout));
    }

    /**
     * The accepted connections' socket options: TCP_NODELAY (with Nagle's algorithm a response written in two parts
     * waits for the client's delayed ACK, ~40 ms on Linux, before its second part leaves); with {@code tls}, a TLS
     * handshake bounded by the request read timeout ({@link HandshakeDeadline}).
     */
    public static SocketOptions connectionOptions(HttpSettings cfg, boolean tls) {
        SocketOptions options = SocketOptions.builder().tcpNoDelay(true).build();
        return tls ? HandshakeDeadline.options(options, cfg.limits().requestReadTimeout()) : options;
    }

    private static DirectHandlers directHandlers() {
        DirectHandler json = (request, event, given, headers, message) -> {
            Status status = given;
            String reason = event == DirectHandler.EventType.INTERNAL_ERROR || message == null || message.isBlank()
                    ? status.reasonPhrase()
                    : message;
            if (event == DirectHandler.EventType.INTERNAL_ERROR && TimedHttp1.readingRequestLine()) {
                // a method that is no HTTP token (`GE"T`): the client's error, not a 5xx that alerts and a stack
                // trace logged for each such request
                status = Status.BAD_REQUEST_400;
                reason = "invalid request line: its method is not an HTTP token";
            }
            String encoding = refusedEncoding(request, status, reason);
            if (encoding != null) {
                // RFC 9110 section 15.5.16: a content coding the server does not take is a 415, and its
                // Accept-Encoding says which it takes (section 12.5.3); Helidon's 400 named neither
                status = Status.UNSUPPORTED_MEDIA_TYPE_415;
                reason = RequestCodings.unsupported(encoding);
                headers.set(HeaderNames.ACCEPT_ENCODING, "identity");
            }
            headers.set(HeaderValues.CONTENT_TYPE_JSON);
            return DirectHandler.TransportResponse.builder()
                    .status(status)
                    .headers(headers)
                    .keepAlive(event.keepAlive())
                    .entity(JsonOut.bytes(JsonOut.errorBody(reason)))
                    .build();
        };
        DirectHandlers.Builder handlers = DirectHandlers.builder();
        for (DirectHandler.EventType event : DirectHandler.EventType.values()) {
            handlers.addHandler(event, json);
        }
        return handlers.build();
    }

    /**
     * The request's {@code Content-Encoding} when Helidon refused the request for it (it decodes none but
     * {@code identity}, {@link RequestCodings}: a request body with another is refused before any route), else null.
     */
    private static String refusedEncoding(DirectHandler.TransportRequest request, Status status, String reason) {
        if (status.code() != Status.BAD_REQUEST_400.code()
                || !reason.toLowerCase(Locale.ROOT).contains("content encoding")) {
            return null;
        }
        return request.headers().first(HeaderNames.CONTENT_ENCODING).orElse(null);
    }

    /**
     * Domain errors to status + JSON body, once (for HEAD, its headers only); anything unexpected is logged and
     * answered without its text.
     */
    static void errors(HttpRouting.Builder routing) {
        routing.error(
                        ApiError.class,
                        (req, res, e) -> JsonOut.error(HeadResponse.of(req, res), e.status(), e.getMessage()))
                .error(
                        RegistryException.class,
                        (req, res, e) -> JsonOut.error(
                                HeadResponse.of(req, res),
                                switch (e.kind()) {
                                    case INVALID -> 400;
                                    case NOT_FOUND -> 404;
                                    case CONFLICT -> 409;
                                },
                                e.getMessage()))
                // a client that declared more body than it sent, then closed: its fault, not ours
                .error(
                        io.helidon.common.buffers.DataReader.InsufficientDataAvailableException.class,
                        (req, res, e) -> JsonOut.error(
                                HeadResponse.of(req, res), 400, "request body ended before its declared length"))
                .error(Exception.class, (req, res, e) -> {
                    LOG.log(
                            System.Logger.Level.ERROR,
                            "request " + req.prologue().uriPath().path() + " failed",
                            e);
                    JsonOut.error(HeadResponse.of(req, res), 500, "internal error");
                });
    }
}
