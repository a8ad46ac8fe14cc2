package io.kvindexer.indexer.recovery;

import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/** A real HTTP server on a free port that answers {@code /dump} with a fixed body: a peer gone wrong. */
final class BrokenPeer implements AutoCloseable {

    private final HttpServer server;
    private final AtomicInteger requests = new AtomicInteger();

    private BrokenPeer(HttpServer server) {
        this.server = server;
    }

    static BrokenPeer start(String dumpBody) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        BrokenPeer peer = new BrokenPeer(server);
        byte[] body = dumpBody.getBytes(StandardCharsets.UTF_8);
        server.createContext("/dump", exchange -> {
            peer.requests.incrementAndGet();
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return peer;
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    int requests() {
        return requests.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
