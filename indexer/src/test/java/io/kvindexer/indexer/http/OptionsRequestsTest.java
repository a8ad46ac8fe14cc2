package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code OPTIONS *} asks about the server in general (RFC 9110 section 9.3.7): a 200 whose {@code Allow} names every
 * method the server takes, with no content; {@code OPTIONS} on a route stays that route's 405. On the real server,
 * over a raw socket (an HTTP client library sends no asterisk-form request target).
 */
class OptionsRequestsTest {

    private static final int PATIENCE_MS = 30_000;
    private static final String NEXT = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";

    private static IndexerApp server;

    @BeforeAll
    static void start() throws Exception {
        server = IndexerApp.start(IndexerConfig.defaults());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void optionsStarNamesTheServersMethodsWithoutContent() throws IOException {
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            send(s, "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n" + NEXT);
            HeadRequestsTest.Response options = HeadRequestsTest.Response.read(in, false);
            assertThat(options.status()).isEqualTo(200);
            assertThat(options.header("allow")).isEqualTo("GET, HEAD, POST, OPTIONS");
            assertThat(options.header("content-length")).isEqualTo("0");
            assertThat(options.body()).isEmpty();
            // the connection goes on
            assertThat(HeadRequestsTest.Response.read(in, false).status()).isEqualTo(200);
        }
    }

    @Test
    void optionsOnARouteIsItsMethodNotAllowed() throws IOException {
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            send(s, "OPTIONS /query HTTP/1.1\r\nHost: x\r\n\r\n");
            HeadRequestsTest.Response options = HeadRequestsTest.Response.read(in, false);
            assertThat(options.status()).isEqualTo(405);
            assertThat(options.header("allow")).isEqualTo("POST");
            assertThat(new String(options.body(), StandardCharsets.UTF_8))
                    .isEqualTo("{\"error\":\"OPTIONS is not allowed on /query; allowed: POST\"}");
        }
    }

    private static void send(Socket s, String request) throws IOException {
        s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
    }
}
