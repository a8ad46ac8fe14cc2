package io.kvindexer.indexer.recovery;

import com.sun.net.httpserver.HttpServer;
import io.kvindexer.indexer.dump.BinaryDump;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A real HTTP server on a free port that answers {@code /dump} with a fixed body: a peer gone wrong, or a JSON-only one. */
final class BrokenPeer implements AutoCloseable {

    private final HttpServer server;
    private final AtomicInteger requests = new AtomicInteger();
    /** {@link System#nanoTime} at the first request, 0 before it */
    private final AtomicLong firstRequestNanos = new AtomicLong();

    private final AtomicLong trickled = new AtomicLong();

    private final List<String> accepts = new CopyOnWriteArrayList<>();
    private final CountDownLatch closed = new CountDownLatch(1);

    private BrokenPeer(HttpServer server) {
        this.server = server;
    }

    static BrokenPeer start(String dumpBody) throws IOException {
        return serving(null, dumpBody.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Answers with {@code binary} (as {@code application/x-kvindexer-dump}) when the request's Accept names that
     * type and {@code binary} is non-null, else with {@code json}: null {@code binary} is a JSON-only (Dynamo) peer.
     */
    static BrokenPeer serving(byte[] binary, byte[] json) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        BrokenPeer peer = new BrokenPeer(server);
        server.createContext("/dump", exchange -> {
            peer.firstRequestNanos.compareAndSet(0, System.nanoTime());
            peer.requests.incrementAndGet();
            String accept = exchange.getRequestHeaders().getFirst("Accept");
            peer.accepts.add(String.valueOf(accept));
            boolean asBinary = binary != null && accept != null && accept.contains(BinaryDump.MEDIA_TYPE);
            byte[] body = asBinary ? binary : json;
            exchange.getResponseHeaders().add("Content-Type", asBinary ? BinaryDump.MEDIA_TYPE : "application/json");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return peer;
    }

    /**
     * Answers its first {@code busyTimes} requests as our replica does when its dump slots are taken (503, {@code
     * Retry-After: 1}, a JSON error), then serves {@code json}.
     */
    static BrokenPeer busy(int busyTimes, String json) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        BrokenPeer peer = new BrokenPeer(server);
        server.createContext("/dump", exchange -> {
            boolean busy = peer.requests.incrementAndGet() <= busyTimes;
            byte[] body = (busy ? "{\"error\":\"too many dumps in progress\"}" : json).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            if (busy) {
                exchange.getResponseHeaders().add("Retry-After", "1");
            }
            exchange.sendResponseHeaders(busy ? 503 : 200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        return peer;
    }

    /**
     * Sends 200, the headers and the first bytes of a JSON dump, then nothing more until closed, or with {@code drip}
     * a byte every 100 ms: a peer that hung, or crawls, after it began to answer.
     */
    static BrokenPeer stalling(boolean drip) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        BrokenPeer peer = new BrokenPeer(server);
        server.createContext("/dump", exchange -> {
            peer.requests.incrementAndGet();
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, 10_000_000);
            OutputStream out = exchange.getResponseBody();
            out.write("{\"m:default\":{\"model_name\":\"m\",".getBytes(StandardCharsets.UTF_8));
            out.flush();
            try {
                while (!peer.closed.await(100, TimeUnit.MILLISECONDS)) {
                    if (drip) {
                        out.write(' ');
                        out.flush();
                    }
                }
            } catch (InterruptedException | IOException e) {
                // closed
            }
        });
        server.start();
        return peer;
    }

    /**
     * Sends 200, the headers and the first bytes of a JSON dump, then {@code bytes} of JSON whitespace every {@code
     * every} until closed (or {@code atMost} has passed): a peer that keeps its body coming, just fast enough, and
     * never ends it.
     */
    static BrokenPeer trickling(int bytes, Duration every, Duration atMost) throws IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        BrokenPeer peer = new BrokenPeer(server);
        byte[] spaces = " ".repeat(bytes).getBytes(StandardCharsets.US_ASCII);
        server.createContext("/dump", exchange -> {
            peer.requests.incrementAndGet();
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, 0); // chunked: no end announced
            OutputStream out = exchange.getResponseBody();
            out.write("{\"m:default\":{\"model_name\":\"m\",".getBytes(StandardCharsets.UTF_8));
            out.flush();
            long until = System.nanoTime() + atMost.toNanos();
            try {
                while (!peer.closed.await(every.toMillis(), TimeUnit.MILLISECONDS) && System.nanoTime() < until) {
                    out.write(spaces);
                    out.flush();
                    peer.trickled.addAndGet(bytes);
                }
                out.close();
            } catch (InterruptedException | IOException e) {
                // closed, or the reader gave up
            }
        });
        server.start();
        return peer;
    }

    /** Bytes a trickling peer has sent after its first ones. */
    long trickled() {
        return trickled.get();
    }

    /** The Accept header of each request, in order ("null" when absent). */
    List<String> accepts() {
        return List.copyOf(accepts);
    }

    String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    /** {@link System#nanoTime} when the first request came, 0 before it. */
    long firstRequestNanos() {
        return firstRequestNanos.get();
    }

    int requests() {
        return requests.get();
    }

    @Override
    public void close() {
        closed.countDown();
        server.stop(0);
    }
}
