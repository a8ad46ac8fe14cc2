package io.kvindexer.indexer.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.webclient.http1.Http1Client;
import io.helidon.webclient.http1.Http1ClientRequest;
import io.helidon.webclient.http1.Http1ClientResponse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * The tests' client of our API, on Helidon's {@link Http1Client}: over a real socket for a running server, or
 * Helidon's in-memory {@code DirectClient} under {@code @RoutingTest}, so one test body runs through both. Bodies
 * as strings, JSON read with Jackson.
 */
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

    private final Http1Client client;
    private final boolean owned;

    /** A socket client of the server at {@code baseUrl}. */
    public HttpTestClient(String baseUrl) {
        this(Http1Client.builder().baseUri(baseUrl).connectTimeout(Duration.ofSeconds(10))
                .readTimeout(Duration.ofSeconds(60)).build(), true);
    }

    /** Wraps a client the harness owns (and closes). */
    public HttpTestClient(Http1Client client) {
        this(client, false);
    }

    private HttpTestClient(Http1Client client, boolean owned) {
        this.client = client;
        this.owned = owned;
    }

    public Response get(String path) {
        return request("GET", path, null, null);
    }

    public Response post(String path, String json) {
        return postRaw(path, json.getBytes(StandardCharsets.UTF_8), "application/json");
    }

    public Response postRaw(String path, byte[] body, String contentType) {
        return request("POST", path, contentType, body);
    }

    public Response method(String method, String path) {
        return request(method, path, null, null);
    }

    /**
     * Any request: {@code body} null sends none; {@code headers} are name, value pairs (e.g. an
     * {@code Authorization} header).
     */
    public Response request(String method, String path, String contentType, byte[] body, String... headers) {
        Http1ClientRequest req = client.method(Method.create(method)).path(path);
        if (contentType != null) {
            req.header(HeaderNames.CONTENT_TYPE, contentType);
        }
        for (int i = 0; i + 1 < headers.length; i += 2) {
            req.header(HeaderNames.create(headers[i]), headers[i + 1]);
        }
        try (Http1ClientResponse r = body == null ? req.request() : req.submit(body)) {
            return new Response(r.status().code(), r.headers().first(HeaderNames.CONTENT_TYPE).orElse(""),
                    r.entity().hasEntity() ? r.as(String.class) : "");
        }
    }

    @Override
    public void close() {
        if (owned) {
            client.closeResource();
        }
    }
}
