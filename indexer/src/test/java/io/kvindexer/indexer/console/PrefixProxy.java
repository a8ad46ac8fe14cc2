package io.kvindexer.indexer.console;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * One origin in front of several indexers, each under a path prefix ({@code /a/ui/} is the first's {@code /ui/}), as
 * a reverse proxy mounts them; it notes the {@code Authorization} header of every request it forwards.
 */
final class PrefixProxy implements AutoCloseable {

    /** A forwarded request: its path at the proxy and its Authorization header (null for none). */
    record Seen(String path, String authorization) {}

    private final HttpServer server;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final HttpClient client = HttpClient.newHttpClient();
    private final List<Seen> seen = new CopyOnWriteArrayList<>();

    /** {@code backends}: prefix (without slashes) to an indexer's base URL. */
    PrefixProxy(Map<String, String> backends) throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        backends.forEach((prefix, base) -> server.createContext("/" + prefix + "/", ex -> forward(ex, prefix, base)));
        server.setExecutor(threads);
        server.start();
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    List<Seen> seen() {
        return List.copyOf(seen);
    }

    private void forward(HttpExchange ex, String prefix, String base) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getRawPath().substring(prefix.length() + 1);
            String query = ex.getRequestURI().getRawQuery();
            String authorization = ex.getRequestHeaders().getFirst("Authorization");
            seen.add(new Seen("/" + prefix + path, authorization));
            byte[] body = ex.getRequestBody().readAllBytes();
            HttpRequest.Builder request = HttpRequest.newBuilder(
                            URI.create(base + path + (query == null ? "" : "?" + query)))
                    .method(
                            ex.getRequestMethod(),
                            body.length == 0
                                    ? HttpRequest.BodyPublishers.noBody()
                                    : HttpRequest.BodyPublishers.ofByteArray(body));
            for (String header : List.of("Authorization", "Content-Type", "Accept")) {
                String value = ex.getRequestHeaders().getFirst(header);
                if (value != null) {
                    request.header(header, value);
                }
            }
            HttpResponse<byte[]> answer = client.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            answer.headers()
                    .firstValue("Content-Type")
                    .ifPresent(v -> ex.getResponseHeaders().set("Content-Type", v));
            byte[] out = answer.body();
            ex.sendResponseHeaders(answer.statusCode(), out.length == 0 ? -1 : out.length);
            ex.getResponseBody().write(out);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        server.stop(0);
        threads.close();
        client.close();
    }
}
