package io.kvindexer.operator.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvindexer.operator.client.WorkerKey;
import java.io.IOException;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An indexer replica at fleet scale for the operator: a real HTTP server on a loopback address with the registry
 * part of the indexer's API ({@code /workers}, {@code /register}, {@code /unregister}, the peer list, {@code /ready})
 * kept in memory, and every call counted by method and path. A thousand real indexer listeners would measure the
 * indexer, not the operator; what the operator sends is what this counts.
 */
final class CountingIndexer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One registered rank; {@code seq} tells one registration from the next of the same rank. */
    record Registered(String model, String tenant, String endpoint, long seq) {}

    final Map<WorkerKey, Registered> registrations = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    /** "METHOD /path" → the status answered instead (a replica in trouble), while set. */
    private final Map<String, Integer> refused = new ConcurrentHashMap<>();

    private final java.util.concurrent.atomic.AtomicLong registered = new java.util.concurrent.atomic.AtomicLong();
    private final ConcurrentSkipListSet<String> peers = new ConcurrentSkipListSet<>();
    private final HttpServer server;

    CountingIndexer(String ip, int port) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getByName(ip), port), 200);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/", this::handle);
        server.start();
    }

    /** Calls received as "METHOD /path" since the last {@link #resetCalls()}. */
    int calls(String methodAndPath) {
        AtomicInteger n = calls.get(methodAndPath);
        return n == null ? 0 : n.get();
    }

    Map<String, Integer> calls() {
        Map<String, Integer> out = new TreeMap<>();
        calls.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    void resetCalls() {
        calls.clear();
    }

    /** From now on {@code methodAndPath} ("POST /register") is answered {@code status} with an error body. */
    void refuse(String methodAndPath, int status) {
        refused.put(methodAndPath, status);
    }

    /** Answers every call again. */
    void accept() {
        refused.clear();
    }

    /** The registration of one rank, or null. */
    Registered registration(long instanceId, int rank) {
        return registrations.get(new WorkerKey(instanceId, rank));
    }

    /** Instance id → rank 0's endpoint, for one model. */
    Map<Long, String> endpoints(String model) {
        Map<Long, String> out = new TreeMap<>();
        registrations.forEach((k, r) -> {
            if (k.dpRank() == 0 && r.model().equals(model)) {
                out.put(k.instanceId(), r.endpoint());
            }
        });
        return out;
    }

    private void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        calls.computeIfAbsent(ex.getRequestMethod() + " " + path, k -> new AtomicInteger())
                .incrementAndGet();
        try (ex) {
            Integer refusal = refused.get(ex.getRequestMethod() + " " + path);
            if (refusal != null) {
                send(ex, refusal, JSON.createObjectNode().put("error", "refused by the test"));
                return;
            }
            JsonNode body = "POST".equals(ex.getRequestMethod())
                    ? JSON.readTree(ex.getRequestBody().readAllBytes())
                    : null;
            switch (path) {
                case "/workers" -> send(ex, 200, workers());
                case "/register" -> register(ex, body);
                case "/unregister" -> {
                    WorkerKey key = key(body);
                    send(ex, registrations.remove(key) == null ? 404 : 200, JSON.createObjectNode());
                }
                case "/peers" -> {
                    ArrayNode a = JSON.createArrayNode();
                    peers.forEach(a::add);
                    send(ex, 200, a);
                }
                case "/register_peer" -> {
                    peers.add(body.path("url").asText());
                    send(ex, 200, JSON.createObjectNode());
                }
                case "/deregister_peer" -> {
                    peers.remove(body.path("url").asText());
                    send(ex, 200, JSON.createObjectNode());
                }
                case "/ready", "/health" ->
                    send(ex, 200, JSON.createObjectNode().put("status", "ready"));
                default -> send(ex, 404, JSON.createObjectNode().put("error", "no route " + path));
            }
        }
    }

    private void register(HttpExchange ex, JsonNode body) throws IOException {
        WorkerKey key = key(body);
        Registered r = new Registered(
                body.path("model_name").asText(),
                body.path("tenant_id").asText(),
                body.path("endpoint").asText(),
                registered.incrementAndGet());
        if (registrations.putIfAbsent(key, r) != null) {
            send(ex, 409, JSON.createObjectNode().put("error", "already registered"));
        } else {
            send(ex, 200, JSON.createObjectNode());
        }
    }

    private ArrayNode workers() {
        Map<Long, Map<Integer, Registered>> byInstance = new TreeMap<>();
        registrations.forEach((k, r) ->
                byInstance.computeIfAbsent(k.instanceId(), i -> new TreeMap<>()).put(k.dpRank(), r));
        ArrayNode out = JSON.createArrayNode();
        byInstance.forEach((id, ranks) -> {
            Registered any = ranks.values().iterator().next();
            ObjectNode w = out.addObject();
            w.put("instance_id", new BigInteger(Long.toUnsignedString(id)));
            w.put("status", "active");
            w.put("model_name", any.model());
            w.put("tenant_id", any.tenant());
            w.put("block_size", 16);
            ObjectNode endpoints = w.putObject("endpoints");
            ranks.forEach((rank, r) -> endpoints.put(Integer.toString(rank), r.endpoint()));
        });
        return out;
    }

    private static WorkerKey key(JsonNode body) {
        return new WorkerKey(
                new BigInteger(body.path("instance_id").asText()).longValue(),
                body.path("dp_rank").asInt(0));
    }

    private static void send(HttpExchange ex, int status, JsonNode body) throws IOException {
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
