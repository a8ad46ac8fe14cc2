package io.kvindexer.operator.observability;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import io.javaoperatorsdk.operator.RuntimeInfo;
import io.prometheus.metrics.expositionformats.ExpositionFormatWriter;
import io.prometheus.metrics.expositionformats.ExpositionFormats;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * The operator's own HTTP port: {@code /healthz} (informers healthy), {@code /readyz} (operator started) and
 * {@code /metrics} (Prometheus, format negotiated from Accept). GET only.
 */
public class ProbeServer implements AutoCloseable {
    private final HttpServer server;

    public ProbeServer(InetSocketAddress address, Supplier<RuntimeInfo> runtime, PrometheusRegistry registry)
            throws IOException {
        server = HttpServer.create(address, 0);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.createContext("/healthz", getOnly(ex -> {
            RuntimeInfo info = runtime.get();
            boolean healthy = info != null && info.allEventSourcesAreHealthy();
            send(
                    ex,
                    healthy ? 200 : 503,
                    "text/plain",
                    healthy
                            ? "ok"
                            : "unhealthy event sources: "
                                    + (info == null
                                            ? "not started"
                                            : info.unhealthyEventSources().keySet()));
        }));
        server.createContext("/readyz", getOnly(ex -> {
            RuntimeInfo info = runtime.get();
            boolean started = info != null && info.isStarted();
            send(ex, started ? 200 : 503, "text/plain", started ? "ok" : "starting");
        }));
        ExpositionFormats formats = ExpositionFormats.init();
        server.createContext("/metrics", getOnly(ex -> {
            ExpositionFormatWriter writer =
                    formats.findWriter(ex.getRequestHeaders().getFirst("Accept"));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            writer.write(out, registry.scrape());
            send(ex, 200, writer.getContentType(), out.toByteArray());
        }));
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    @Override
    public void close() {
        server.stop(0);
    }

    private interface Handler {
        void handle(HttpExchange exchange) throws IOException;
    }

    private static HttpHandler getOnly(Handler handler) {
        return ex -> {
            try (ex) {
                if (!"GET".equals(ex.getRequestMethod())) {
                    send(ex, 405, "text/plain", "method not allowed");
                    return;
                }
                handler.handle(ex);
            }
        };
    }

    private static void send(HttpExchange ex, int status, String type, String body) throws IOException {
        send(ex, status, type + "; charset=utf-8", body.getBytes(StandardCharsets.UTF_8));
    }

    private static void send(HttpExchange ex, int status, String type, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(status, body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }
}
