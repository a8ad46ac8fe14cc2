package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.ServiceLimits;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * A client that trickles its request line or headers (slowloris: one byte every few hundred ms, never the blank
 * line) gets a 408 JSON error and its connection closed once {@code --request-read-timeout-ms} has passed since its
 * request line began to arrive, instead of holding the connection for as long as it keeps trickling. A keep-alive connection idle between
 * requests for longer than that is not cut: the clock starts at a request line. The real server ({@link IndexerApp}),
 * as the deadline is set on its HTTP/1 protocol ({@code IndexerRouting.headerDeadline}). The methods mostly wait out
 * the deadline, each with its own server, so they run two at once.
 */
class SlowHeadersTest {

    private static final Duration DEADLINE = Duration.ofMillis(1000);
    /** how long the client goes on trickling, and waits for the answer: far past the deadline */
    private static final int PATIENCE_MS = 30_000;

    private static IndexerApp start() throws Exception {
        return IndexerApp.start(IndexerConfig.defaults()
                .with(c -> c.limits = ServiceLimits.DEFAULTS.with(l -> l.requestReadTimeout = DEADLINE)));
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void trickledHeadersGet408AndTheConnectionClosed() throws Exception {
        try (IndexerApp server = start();
                Socket slow = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            OutputStream out = slow.getOutputStream();
            out.write("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            Thread trickler = Thread.ofVirtual().start(() -> {
                long end = System.nanoTime() + Duration.ofMillis(PATIENCE_MS).toNanos();
                try {
                    while (System.nanoTime() < end) {
                        out.write('a');
                        out.flush();
                        Thread.sleep(200);
                    }
                } catch (IOException | InterruptedException e) {
                    // the server closed the connection: what the test waits for
                }
            });
            try {
                // meanwhile other clients are served
                assertThat(get(server, "/health")).startsWith("HTTP/1.1 200");
                String reply = readUntilClosed(slow.getInputStream());
                assertThat(reply).startsWith("HTTP/1.1 408");
                assertThat(reply).containsIgnoringCase("connection: close");
                assertThat(reply)
                        .contains("{\"error\":\"request headers not received within " + DEADLINE.toMillis() + " ms");
            } finally {
                trickler.interrupt();
                trickler.join();
            }
            assertThat(get(server, "/health")).startsWith("HTTP/1.1 200");
        }
    }

    /**
     * The same for a request line that never ends ({@code GET /hea}, then a byte at a time), which Helidon bounds
     * only by its idle connection timeout (minutes): the clock starts at the line's first bytes. On a fresh
     * connection and on a keep-alive one after a request, idle between the two for longer than the deadline.
     */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aTrickledRequestLineGets408AndTheConnectionClosed() throws Exception {
        try (IndexerApp server = start();
                Socket fresh = RawHttp.connect(server.baseUrl(), PATIENCE_MS);
                Socket reused = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            OutputStream reusedOut = reused.getOutputStream();
            reusedOut.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertThat(RawHttp.readResponse(reused.getInputStream())).startsWith("HTTP/1.1 200");
            Thread.sleep(DEADLINE.multipliedBy(2).toMillis()); // idle: its clock must not run meanwhile
            for (Socket slow : List.of(fresh, reused)) {
                OutputStream out = slow.getOutputStream();
                out.write("GET /hea".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                Thread trickler = Thread.ofVirtual().start(() -> {
                    long end =
                            System.nanoTime() + Duration.ofMillis(PATIENCE_MS).toNanos();
                    try {
                        while (System.nanoTime() < end) {
                            Thread.sleep(300);
                            out.write('l');
                            out.flush();
                        }
                    } catch (IOException | InterruptedException e) {
                        // the server closed the connection: what the test waits for
                    }
                });
                try {
                    String reply = readUntilClosed(slow.getInputStream());
                    assertThat(reply).startsWith("HTTP/1.1 408");
                    assertThat(reply).containsIgnoringCase("connection: close");
                    assertThat(reply)
                            .contains("{\"error\":\"request line not received within " + DEADLINE.toMillis() + " ms");
                } finally {
                    trickler.interrupt();
                    trickler.join();
                }
            }
            assertThat(get(server, "/health")).startsWith("HTTP/1.1 200");
        }
    }

    /** Part of a request line sent with the previous request (pipelined), and then nothing: timed from then on. */
    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aRequestLineBegunWithThePreviousRequestIsTimedToo() throws Exception {
        try (IndexerApp server = start();
                Socket conn = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            conn.getOutputStream()
                    .write("GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /hea".getBytes(StandardCharsets.US_ASCII));
            String reply = readUntilClosed(conn.getInputStream());
            assertThat(reply).startsWith("HTTP/1.1 200");
            assertThat(reply.substring(reply.indexOf("HTTP/1.1 408")))
                    .containsIgnoringCase("connection: close")
                    .contains("{\"error\":\"request line not received within " + DEADLINE.toMillis() + " ms");
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void anIdleKeepAliveConnectionIsNotCutAndHttp10StillGets505() throws Exception {
        try (IndexerApp server = start();
                Socket conn = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            OutputStream out = conn.getOutputStream();
            InputStream in = conn.getInputStream();
            byte[] request = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
            out.write(request);
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200");
            Thread.sleep(DEADLINE.multipliedBy(2).toMillis()); // idle between requests, past the deadline
            out.write(request);
            assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200");
            // the server's HTTP/1 protocol, now configured, still refuses HTTP/1.0 as documented (operations.md)
            try (Socket old = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
                old.getOutputStream().write("GET /health HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                assertThat(readUntilClosed(old.getInputStream()))
                        .startsWith("HTTP/1.1 505")
                        .contains("HTTP 1.0 is not supported");
            }
        }
    }

    private static String get(IndexerApp server, String path) throws IOException {
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            s.getOutputStream()
                    .write(("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            return RawHttp.readResponse(s.getInputStream());
        }
    }

    /** Everything the server sends until it closes the connection (the socket timeout fails a hang). */
    private static String readUntilClosed(InputStream in) throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        byte[] chunk = new byte[4096];
        try {
            for (int n; (n = in.read(chunk)) >= 0; ) {
                buf.write(chunk, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError(
                    "the server neither answered nor closed; got: " + buf.toString(StandardCharsets.UTF_8), e);
        } catch (IOException e) {
            // a reset after the answer still counts as closed
        }
        return buf.toString(StandardCharsets.UTF_8);
    }
}
