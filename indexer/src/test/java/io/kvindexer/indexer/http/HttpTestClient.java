package io.kvindexer.indexer.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** A small JDK HttpClient wrapper for tests: real sockets, bodies as strings, JSON read with Jackson. */
public final class HttpTestClient implements AutoCloseable {

    public static final ObjectMapper JSON = new ObjectMapper();

    /** A response: status, content type, body. */
    public record Response(int status, String contentType, String body) {
        public JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new UncheckedIOException("not JSON (" + status + "): " + body, e);
            }
        }

        /** The {@code error} text of a JSON error body. */
        public String error() {
            return json().path("error").asText(null);
        }
    }

    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final String baseUrl;

    public HttpTestClient(String baseUrl) {
        this.baseUrl = baseUrl;
    }

    public Response get(String path) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).GET());
    }

    public Response post(String path, String json) {
        return postRaw(path, json.getBytes(StandardCharsets.UTF_8), "application/json");
    }

    public Response postRaw(String path, byte[] body, String contentType) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        return send(b);
    }

    public Response method(String method, String path) {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path))
                .method(method, HttpRequest.BodyPublishers.noBody()));
    }

    public Response send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> r = client.send(request.timeout(Duration.ofSeconds(60)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Response(r.statusCode(), r.headers().firstValue("content-type").orElse(""), r.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
