package io.kvindexer.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** The few indexer HTTP calls the end-to-end benchmarks make (JDK HttpClient, JSON with Jackson). */
final class BenchHttp {

    static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
    private final String baseUrl;

    BenchHttp(String baseUrl) {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    }

    void register(long instanceId, String endpoint, String replayEndpoint, String model, int blockSize) {
        ObjectNode body = JSON.createObjectNode();
        body.put("instance_id", instanceId);
        body.put("endpoint", endpoint);
        if (replayEndpoint != null) {
            body.put("replay_endpoint", replayEndpoint);
        }
        body.put("model_name", model);
        body.put("block_size", blockSize);
        HttpResponse<String> r = post("/register", body.toString());
        if (r.statusCode() != 201) {
            throw new IllegalStateException("register " + instanceId + ": " + r.statusCode() + " " + r.body());
        }
    }

    /** The body of a {@code /query} for these tokens. */
    static byte[] queryBody(String model, int[] tokens) {
        StringBuilder sb = new StringBuilder(tokens.length * 7 + 64);
        sb.append("{\"model_name\":\"").append(model).append("\",\"token_ids\":[");
        for (int i = 0; i < tokens.length; i++) {
            if (i > 0) {
                sb.append(',');
            }
            sb.append(Integer.toUnsignedString(tokens[i]));
        }
        return sb.append("]}").toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** The msgpack body of a {@code /query}: token ids as a bin of little-endian u32 (the Mooncake conductor's form). */
    static byte[] msgpackQueryBody(String model, int[] tokens) {
        java.nio.ByteBuffer le =
                java.nio.ByteBuffer.allocate(tokens.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        le.asIntBuffer().put(tokens);
        try (org.msgpack.core.MessageBufferPacker p = org.msgpack.core.MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(2);
            p.packString("model_name").packString(model);
            p.packString("token_ids").packBinaryHeader(le.capacity()).writePayload(le.array());
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Device-tier matched tokens of {@code instanceId} for the query, 0 when absent (or no index yet). */
    long matchedTokens(byte[] queryBody, long instanceId) {
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(baseUrl + "/query"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(queryBody))
                .build());
        if (r.statusCode() == 404) {
            return 0;
        }
        if (r.statusCode() != 200) {
            throw new IllegalStateException("/query: " + r.statusCode() + " " + r.body());
        }
        JsonNode ranks = tree(r.body()).path("scores").path(Long.toUnsignedString(instanceId));
        long best = 0;
        for (JsonNode v : ranks) {
            best = Math.max(best, v.asLong());
        }
        return best;
    }

    HttpClient client() {
        return client;
    }

    HttpResponse<String> post(String path, String json) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build());
    }

    HttpResponse<String> send(HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static JsonNode tree(String body) {
        try {
            return JSON.readTree(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
