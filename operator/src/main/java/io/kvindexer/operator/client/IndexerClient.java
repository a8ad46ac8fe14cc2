package io.kvindexer.operator.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvindexer.tls.CertificateRefusal;
import java.io.IOException;
import java.math.BigInteger;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Typed client for the indexer's HTTP API (the calls the operator makes, plus /query for tests). Every call has a
 * request timeout; failures surface as {@link IndexerClientException}. Thread-safe; one instance is shared, closed
 * when the operator stops.
 */
public class IndexerClient implements AutoCloseable {

    /**
     * Told about every call: which replica ({@link IndexerEndpoint#qualifiedName}), which operation, how long, and
     * whether it succeeded.
     */
    @FunctionalInterface
    public interface CallObserver {
        CallObserver NONE = (replica, operation, elapsed, ok) -> {};

        void observe(String replica, String operation, Duration elapsed, boolean ok);
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final BigInteger TWO_64 = BigInteger.ONE.shiftLeft(64);
    /** How long a TLS client may go unused before it is closed, unless told otherwise. */
    public static final Duration DEFAULT_TLS_IDLE = Duration.ofMinutes(10);

    /** One TLS client, the calls under way on it and when it was last used (nanoTime). */
    private static final class TlsClient {
        final HttpClient http;
        final AtomicInteger inFlight = new AtomicInteger(); // raised, and checked for closing, in the map's compute
        volatile long lastUsed;

        TlsClient(HttpClient http, long now) {
            this.http = http;
            this.lastUsed = now;
        }
    }

    private final HttpClient http;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final CallObserver observer;
    private final String authToken;
    /**
     * One client per trusted CA (a KvIndexer's {@code ca.crt}): TLS contexts are costly, connections pooled. A CA
     * no call used for {@link #tlsIdle} (every KvIndexer that trusted it deleted, its namespace gone, its CA
     * replaced) has its client closed, with its selector thread and connections: it is made again if needed.
     */
    private final Map<String, TlsClient> tlsClients = new ConcurrentHashMap<>();

    private final Duration tlsIdle;
    /** Per KvIndexer, the last token a replica accepted: tried again when a rotated one is refused. */
    private final Map<String, String> lastAccepted = new ConcurrentHashMap<>();

    public IndexerClient(Duration connectTimeout, Duration requestTimeout, CallObserver observer) {
        this(connectTimeout, requestTimeout, observer, null);
    }

    /** With {@code authToken} non-null every call carries {@code Authorization: Bearer <token>}. */
    public IndexerClient(Duration connectTimeout, Duration requestTimeout, CallObserver observer, String authToken) {
        this(connectTimeout, requestTimeout, observer, authToken, DEFAULT_TLS_IDLE);
    }

    /**
     * As above; a TLS client unused for {@code tlsIdle} is closed. Set it well above the period at which every
     * KvIndexer's replicas are called (the resync): a client still in use is then never closed, only one whose CA no
     * KvIndexer trusts any more.
     */
    public IndexerClient(
            Duration connectTimeout,
            Duration requestTimeout,
            CallObserver observer,
            String authToken,
            Duration tlsIdle) {
        this.tlsIdle = tlsIdle;
        this.http = HttpClient.newBuilder()
                .connectTimeout(connectTimeout)
                .version(HttpClient.Version.HTTP_1_1)
                .build();
        this.connectTimeout = connectTimeout;
        this.requestTimeout = requestTimeout;
        this.observer = observer;
        this.authToken = authToken;
    }

    public IndexerClient() {
        this(Duration.ofSeconds(2), Duration.ofSeconds(5), CallObserver.NONE);
    }

    /** GET /workers (all models and tenants). */
    public List<RegisteredWorker> workers(IndexerEndpoint replica) {
        return parseWorkers(call(replica, "workers", get(replica, "/workers")));
    }

    /** GET /workers?model_name=&amp;tenant_id= */
    public List<RegisteredWorker> workers(IndexerEndpoint replica, String modelName, String tenantId) {
        String q = "/workers?model_name=" + enc(modelName) + "&tenant_id=" + enc(tenantId);
        return parseWorkers(call(replica, "workers", get(replica, q)));
    }

    /** POST /register for one (instance, dp rank). */
    public void register(
            IndexerEndpoint replica, WorkerRegistration r, String modelName, String tenantId, int blockSize) {
        ObjectNode body = JSON.createObjectNode();
        body.put("instance_id", new BigInteger(r.instanceIdText()));
        body.put("endpoint", r.endpoint());
        body.put("model_name", modelName);
        body.put("tenant_id", tenantId);
        body.put("block_size", blockSize);
        body.put("dp_rank", r.dpRank());
        if (r.replayEndpoint() != null) {
            body.put("replay_endpoint", r.replayEndpoint());
        }
        if (r.podName() != null) {
            body.put("pod_name", r.podName());
        }
        call(replica, "register", post(replica, "/register", body));
    }

    /** POST /unregister of one dp rank (the tenant + dp_rank form). */
    public void unregister(IndexerEndpoint replica, long instanceId, int dpRank, String modelName, String tenantId) {
        ObjectNode body = JSON.createObjectNode();
        body.put("instance_id", new BigInteger(Long.toUnsignedString(instanceId)));
        body.put("model_name", modelName);
        body.put("tenant_id", tenantId);
        body.put("dp_rank", dpRank);
        call(replica, "unregister", post(replica, "/unregister", body));
    }

    public List<String> peers(IndexerEndpoint replica) {
        JsonNode node = call(replica, "peers", get(replica, "/peers"));
        List<String> urls = new ArrayList<>();
        node.forEach(n -> urls.add(n.asText()));
        return urls;
    }

    public void registerPeer(IndexerEndpoint replica, String url) {
        call(
                replica,
                "register_peer",
                post(replica, "/register_peer", JSON.createObjectNode().put("url", url)));
    }

    public void deregisterPeer(IndexerEndpoint replica, String url) {
        call(
                replica,
                "deregister_peer",
                post(replica, "/deregister_peer", JSON.createObjectNode().put("url", url)));
    }

    /** GET /ready: true on 200, false on 503 (recovering or waiting for workers); errors when unreachable. */
    public boolean ready(IndexerEndpoint replica) {
        try {
            call(replica, "ready", get(replica, "/ready"));
            return true;
        } catch (IndexerClientException e) {
            if (e.status() == 503) {
                return false;
            }
            throw e;
        }
    }

    /** GET /dump (JSON, the whole index as router events; needs the token when auth is on): for tests and tools. */
    public JsonNode dump(IndexerEndpoint replica) {
        return call(replica, "dump", get(replica, "/dump"));
    }

    /** POST /query; the raw score object ({@code scores}, {@code instances}, ...). */
    public JsonNode query(IndexerEndpoint replica, String modelName, String tenantId, List<Integer> tokenIds) {
        ObjectNode body = JSON.createObjectNode();
        ArrayNode tokens = body.putArray("token_ids");
        tokenIds.forEach(tokens::add);
        body.put("model_name", modelName);
        body.put("tenant_id", tenantId);
        return call(replica, "query", post(replica, "/query", body));
    }

    private HttpRequest.Builder get(IndexerEndpoint replica, String path) {
        return HttpRequest.newBuilder(replica.baseUrl().resolve(path))
                .timeout(requestTimeout)
                .GET();
    }

    private HttpRequest.Builder post(IndexerEndpoint replica, String path, JsonNode body) {
        return HttpRequest.newBuilder(replica.baseUrl().resolve(path))
                .timeout(requestTimeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.toString()));
    }

    private static HttpRequest authorized(HttpRequest.Builder request, String token) {
        HttpRequest.Builder copy = request.copy();
        if (token != null) {
            copy.header("Authorization", "Bearer " + token);
        }
        return copy.build();
    }

    /**
     * The TLS client trusting {@code ca}, counted as in use until {@link #release}: a client is closed only while no
     * call is under way on it (both happen under the map's lock of the entry).
     */
    private TlsClient acquire(String ca) {
        long now = System.nanoTime();
        return tlsClients.compute(ca, (k, c) -> {
            TlsClient out = c != null
                    ? c
                    : new TlsClient(
                            HttpClient.newBuilder()
                                    .connectTimeout(connectTimeout)
                                    .version(HttpClient.Version.HTTP_1_1)
                                    .sslContext(ReplicaTrust.sslContext(k))
                                    .build(),
                            now);
            out.inFlight.incrementAndGet();
            out.lastUsed = now;
            return out;
        });
    }

    private static void release(TlsClient client) {
        client.lastUsed = System.nanoTime();
        client.inFlight.decrementAndGet();
    }

    /** Closes the TLS clients idle for longer than {@link #tlsIdle}: a few entries, looked at on every call. */
    private void closeIdle() {
        long now = System.nanoTime();
        for (String ca : tlsClients.keySet()) {
            tlsClients.computeIfPresent(ca, (k, c) -> {
                if (c.inFlight.get() == 0 && now - c.lastUsed > tlsIdle.toNanos()) {
                    c.http.shutdown();
                    return null;
                }
                return c;
            });
        }
    }

    /** Forgets the last accepted token of every KvIndexer ({@code namespace/name}) not in {@code live}. */
    public void retainTokens(java.util.Set<String> live) {
        lastAccepted.keySet().retainAll(live);
    }

    /** KvIndexers whose last accepted token is remembered. */
    public int rememberedTokens() {
        return lastAccepted.size();
    }

    /** The TLS clients open now (one per CA called within the idle time): for tests. */
    public int openTlsClients() {
        return tlsClients.size();
    }

    /** Closes every client: calls under way finish, none starts. */
    @Override
    public void close() {
        http.shutdown();
        tlsClients.values().forEach(c -> c.http.shutdown());
        tlsClients.clear();
    }

    /**
     * Sends with the access's token (or the operator's own); when a replica refuses it (401) and another token was
     * accepted for this KvIndexer before, that one is tried once: during a rotation the operator reads the new
     * token from the API at once, while a replica's mounted copy follows up to a minute or two later.
     */
    private HttpResponse<String> send(IndexerEndpoint replica, HttpRequest.Builder request)
            throws IOException, InterruptedException {
        ReplicaAccess access = replica.access();
        closeIdle();
        if (access.caPem() == null) {
            return send(http, access, request);
        }
        TlsClient tls = acquire(access.caPem());
        try {
            return send(tls.http, access, request);
        } finally {
            release(tls);
        }
    }

    private HttpResponse<String> send(HttpClient client, ReplicaAccess access, HttpRequest.Builder request)
            throws IOException, InterruptedException {
        String token = access.token() != null ? access.token() : authToken;
        HttpResponse<String> response = exchange(client, authorized(request, token));
        String before = lastAccepted.get(access.key());
        if (response.statusCode() == 401 && before != null && !before.equals(token)) {
            HttpResponse<String> retried = exchange(client, authorized(request, before));
            if (retried.statusCode() != 401) {
                return retried;
            }
        } else if (token != null && response.statusCode() != 401) {
            lastAccepted.put(access.key(), token);
        }
        return response;
    }

    /**
     * One request and its whole answer within the connect and request timeouts. The JDK's request timeout ends with
     * the response headers (before JDK 26): a replica that stalled after them (a node gone mid-answer, a frozen
     * container) held the reconcile's call, and so every later reconcile of that resource, for good.
     */
    private HttpResponse<String> exchange(HttpClient client, HttpRequest request)
            throws IOException, InterruptedException {
        CompletableFuture<HttpResponse<String>> answer =
                client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
        Duration bound = connectTimeout.plus(requestTimeout);
        try {
            return answer.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            answer.cancel(true);
            throw new HttpTimeoutException("no whole answer within " + bound.toMillis() + " ms");
        } catch (InterruptedException e) {
            answer.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw new IOException(e.getCause());
        }
    }

    private JsonNode call(IndexerEndpoint replica, String operation, HttpRequest.Builder builder) {
        long start = System.nanoTime();
        boolean ok = false;
        HttpRequest request = builder.build();
        try {
            HttpResponse<String> response = send(replica, builder);
            int status = response.statusCode();
            if (status / 100 != 2) {
                throw new IndexerClientException(
                        request.method() + " " + request.uri().getPath() + " on " + replica.name() + " answered "
                                + status + ": " + errorText(response.body()),
                        status,
                        null);
            }
            JsonNode node = response.body().isBlank() ? JSON.nullNode() : JSON.readTree(response.body());
            ok = true;
            return node;
        } catch (IOException e) {
            throw new IndexerClientException(
                    replica.name() + " (" + replica.baseUrl() + ") unreachable: " + describe(e), -1, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IndexerClientException("interrupted calling " + replica.name(), -1, e);
        } finally {
            observer.observe(replica.qualifiedName(), operation, Duration.ofNanos(System.nanoTime() - start), ok);
        }
    }

    private static List<RegisteredWorker> parseWorkers(JsonNode array) {
        if (array == null || !array.isArray()) {
            return List.of();
        }
        List<RegisteredWorker> workers = new ArrayList<>(array.size());
        for (JsonNode w : array) {
            Map<Integer, String> endpoints = new TreeMap<>();
            w.path("endpoints")
                    .properties()
                    .forEach(e -> endpoints.put(
                            Integer.parseInt(e.getKey()), e.getValue().asText()));
            Map<Integer, ListenerExactness> exactness = new TreeMap<>();
            w.path("listeners").properties().forEach(e -> {
                ListenerExactness x = exactness(e.getValue());
                if (x != null) {
                    exactness.put(Integer.parseInt(e.getKey()), x);
                }
            });
            workers.add(new RegisteredWorker(
                    unsigned(w.path("instance_id")),
                    w.path("model_name").asText(null),
                    w.path("tenant_id").asText(null),
                    w.path("block_size").asInt(),
                    w.path("status").asText(null),
                    Collections.unmodifiableMap(endpoints),
                    Collections.unmodifiableMap(exactness)));
        }
        return workers;
    }

    /**
     * A listener's {@code exactness} ({@code exact}, {@code replaying}, {@code degraded}) with its
     * {@code exactness_reason} and {@code exactness_since_ms} (Unix epoch milliseconds, shown as an ISO-8601 instant),
     * as the indexer's {@code /workers} writes them; null when the indexer does not report it (an older one). A
     * listener not connected, with its {@code connect_error}, is {@link ListenerExactness#NOT_CONNECTED} instead.
     */
    static ListenerExactness exactness(JsonNode listener) {
        JsonNode connectError = listener.path("connect_error");
        if (listener.path("connected").isBoolean()
                && !listener.path("connected").asBoolean()
                && connectError.isTextual()) {
            return new ListenerExactness(ListenerExactness.NOT_CONNECTED, connectError.asText(), null);
        }
        JsonNode x = listener.path("exactness");
        if (!x.isTextual()) {
            return null;
        }
        JsonNode millis = listener.path("exactness_since_ms");
        String since = millis.canConvertToLong()
                ? java.time.Instant.ofEpochMilli(millis.asLong()).toString()
                : null;
        return new ListenerExactness(x.asText(), text(listener, "exactness_reason"), since);
    }

    /** The field as text, or null when absent or not a string. */
    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v != null && v.isTextual() ? v.asText() : null;
    }

    /** u64 JSON numbers may exceed Long.MAX_VALUE: keep the raw 64-bit pattern. */
    static long unsigned(JsonNode n) {
        BigInteger v = n.isTextual() ? new BigInteger(n.asText()) : n.bigIntegerValue();
        if (v.signum() < 0) {
            v = v.add(TWO_64);
        }
        return v.longValue();
    }

    private static String errorText(String body) {
        try {
            JsonNode node = JSON.readTree(body);
            if (node != null && node.hasNonNull("error")) {
                return node.get("error").asText();
            }
        } catch (IOException ignored) {
            // not JSON: show the text as it came
        }
        return body.length() > 200 ? body.substring(0, 200) + "..." : body;
    }

    /**
     * A failed call's cause; a refused certificate first says why and what to change (the JDK's text says "PKIX
     * path ..." for an expired replica certificate as for an unknown CA).
     */
    static String describe(IOException e) {
        String m = e.getMessage();
        String raw = e.getClass().getSimpleName() + (m == null ? "" : ": " + m);
        CertificateRefusal refused = CertificateRefusal.of(e);
        return refused == null ? raw : certificateRefused(refused) + ": " + raw;
    }

    /** A refused replica certificate in words, with what to look at. */
    private static String certificateRefused(CertificateRefusal refused) {
        return switch (refused) {
            case EXPIRED ->
                "the replica's TLS certificate (or one of its chain) has expired: renew the certificate of the"
                        + " KvIndexer's <name>-tls Secret";
            case NOT_YET_VALID ->
                "the replica's TLS certificate (or one of its chain) is not valid yet: check the certificate of the"
                        + " KvIndexer's <name>-tls Secret and the clocks of the operator's and the replica's nodes";
            case OTHER_HOST -> "the replica's TLS certificate does not name the host the operator called";
            case UNTRUSTED_CA ->
                "the replica's TLS certificate is not signed by the KvIndexer's CA (ca.crt of its <name>-tls"
                        + " Secret)";
        };
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
