package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.helidon.http.HeaderNames;
import io.helidon.http.Method;
import io.helidon.webclient.http1.Http1Client;
import io.helidon.webclient.http1.Http1ClientRequest;
import io.helidon.webclient.http1.Http1ClientResponse;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.awaitility.Awaitility;

/**
 * The tests' client of our API, bodies as strings, JSON read with Jackson. Over a socket it is the JDK's
 * HttpClient (an HTTP implementation independent of the server's, and ready at once where Helidon's client takes
 * seconds to initialise in a fresh JVM: timing-sensitive tests need that); under {@code @RoutingTest} it drives
 * Helidon's in-memory {@code DirectClient}. Either way the same test body runs.
 */
public final class HttpTestClient implements AutoCloseable {

    public static final ObjectMapper JSON = new ObjectMapper();

    /**
     * A response: status, content type, body, and its {@code Allow} and {@code WWW-Authenticate} headers ("" when
     * absent).
     */
    public record Response(int status, String contentType, String body, String allow, String challenge) {
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

        /** Asserts the status and the API's success body, {@code {"status":"ok"}}; returns this response. */
        public Response assertOk(int expected) {
            assertStatus(expected);
            assertThat(body).isEqualTo("{\"status\":\"ok\"}");
            return this;
        }

        /** Asserts the status (the body is the failure's description); returns this response. */
        public Response assertStatus(int expected) {
            assertThat(status).as(body).isEqualTo(expected);
            return this;
        }
    }

    /** One request/response exchange; {@code body} null sends none, {@code headers} are name, value pairs. */
    private interface Transport extends AutoCloseable {
        Response exchange(String method, String path, String contentType, byte[] body, String[] headers);

        @Override
        void close();
    }

    private final Transport transport;

    /** A socket client of the server at {@code baseUrl}. */
    public HttpTestClient(String baseUrl) {
        this.transport = new Jdk(baseUrl);
    }

    /** Requests through a Helidon client (the harness's DirectClient), closed with this one. */
    public HttpTestClient(Http1Client client) {
        this.transport = new Helidon(client);
    }

    /** Registers {@code sim} as instance 1 of model "m" with 4-token blocks (201 expected); returns once subscribed. */
    public void registerEngine(EngineSimulator sim) {
        post(
                        "/register",
                        "{\"instance_id\":1,\"endpoint\":\"" + sim.endpoint() + "\",\"replay_endpoint\":\""
                                + sim.replayEndpoint() + "\",\"model_name\":\"m\",\"block_size\":4}")
                .assertStatus(201);
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> sim.subscriptions() >= 1);
    }

    /**
     * The value of one series in a {@code /metrics} scrape, {@code series} its name and labels as exposed (e.g.
     * {@code dynamo_kvindexer_listeners{status="active"}}); -1 when the scrape has no such line.
     */
    public double metric(String series) {
        String line = series + " ";
        return get("/metrics")
                .body()
                .lines()
                .filter(l -> l.startsWith(line))
                .mapToDouble(l -> Double.parseDouble(l.substring(line.length())))
                .findFirst()
                .orElse(-1);
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

    /** Any request: {@code body} null sends none; {@code headers} are name, value pairs (e.g. Authorization). */
    public Response request(String method, String path, String contentType, byte[] body, String... headers) {
        return transport.exchange(method, path, contentType, body, headers);
    }

    @Override
    public void close() {
        transport.close();
    }

    private static final class Jdk implements Transport {
        private final HttpClient client =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        private final String baseUrl;

        Jdk(String baseUrl) {
            this.baseUrl = baseUrl;
        }

        @Override
        public Response exchange(String method, String path, String contentType, byte[] body, String[] headers) {
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path))
                    .timeout(Duration.ofSeconds(60))
                    .method(
                            method,
                            body == null
                                    ? HttpRequest.BodyPublishers.noBody()
                                    : HttpRequest.BodyPublishers.ofByteArray(body));
            if (contentType != null) {
                b.header("Content-Type", contentType);
            }
            for (int i = 0; i + 1 < headers.length; i += 2) {
                b.header(headers[i], headers[i + 1]);
            }
            try {
                HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
                return new Response(
                        r.statusCode(),
                        r.headers().firstValue("content-type").orElse(""),
                        r.body(),
                        r.headers().firstValue("allow").orElse(""),
                        r.headers().firstValue("www-authenticate").orElse(""));
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

    private record Helidon(Http1Client client) implements Transport {
        @Override
        public Response exchange(String method, String path, String contentType, byte[] body, String[] headers) {
            // the in-memory client takes the path as is: a query string goes in as parameters
            int q = path.indexOf('?');
            Http1ClientRequest req = client.method(Method.create(method)).path(q < 0 ? path : path.substring(0, q));
            if (q >= 0) {
                for (String pair : path.substring(q + 1).split("&")) {
                    int eq = pair.indexOf('=');
                    req.queryParam(
                            URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8),
                            eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
            if (contentType != null) {
                req.header(HeaderNames.CONTENT_TYPE, contentType);
            }
            for (int i = 0; i + 1 < headers.length; i += 2) {
                req.header(HeaderNames.create(headers[i]), headers[i + 1]);
            }
            try (Http1ClientResponse r = body == null ? req.request() : req.submit(body)) {
                return new Response(
                        r.status().code(),
                        r.headers().first(HeaderNames.CONTENT_TYPE).orElse(""),
                        r.entity().hasEntity() ? r.as(String.class) : "",
                        r.headers().first(HeaderNames.ALLOW).orElse(""),
                        r.headers().first(HeaderNames.WWW_AUTHENTICATE).orElse(""));
            }
        }

        @Override
        public void close() {
            client.closeResource();
        }
    }

    /** The entry of {@code workers} (a {@code /workers} answer) for {@code instanceId}; fails the test without one. */
    public static JsonNode worker(JsonNode workers, long instanceId) {
        for (JsonNode w : workers) {
            if (w.get("instance_id").asLong() == instanceId) {
                return w;
            }
        }
        throw new AssertionError("no instance " + instanceId + " in " + workers);
    }
}
