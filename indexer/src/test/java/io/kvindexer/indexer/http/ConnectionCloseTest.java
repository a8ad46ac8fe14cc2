package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import java.io.BufferedInputStream;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * After an answer that says {@code Connection: close} the server closes the connection (RFC 9112 section 9.6), for a
 * request that asked for it and for every answer while a stop is coming: Helidon 4.5 sent the header and kept
 * reading, so a client waiting for the end of the connection waited until its own timeout. The real server, over a
 * raw socket.
 */
class ConnectionCloseTest {

    /** how long the test waits for an answer or the close */
    private static final int PATIENCE_MS = 30_000;

    private static final String QUERY = "{\"model_name\":\"m\",\"token_ids\":[1,2,3]}";

    private static IndexerApp server;

    @BeforeAll
    static void start() throws Exception {
        server = IndexerApp.start(IndexerConfig.defaults());
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    /** Each row: method, path, body (none: empty), the answer's status. */
    @ParameterizedTest(name = "{0} {1}: {3}")
    @CsvSource(delimiter = '|', textBlock = """
            GET    | /health  |                  | 200
            GET    | /workers |                  | 200
            GET    | /nope    |                  | 404
            DELETE | /query   |                  | 405
            POST   | /query   | QUERY            | 404
            POST   | /query   | {"model_name":1} | 422
            OPTIONS| *        |                  | 200
            """)
    void aRequestThatAsksForCloseGetsItsAnswerThenTheClose(String method, String path, String body, int status)
            throws Exception {
        String content = body == null ? "" : body.equals("QUERY") ? QUERY : body;
        String request = method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                + (content.isEmpty()
                        ? ""
                        : "Content-Type: application/json\r\nContent-Length: " + content.length() + "\r\n")
                + "\r\n" + content;
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            s.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            InputStream in = new BufferedInputStream(s.getInputStream());
            String answer = RawHttp.readResponse(in);
            assertThat(answer).startsWith("HTTP/1.1 " + status).containsIgnoringCase("\r\nConnection: close\r\n");
            assertThat(RawHttp.closed(in))
                    .as("the connection ends after the answer")
                    .isTrue();
        }
    }

    /** A request without it keeps its connection, as before. */
    @Test
    void aKeepAliveRequestKeepsItsConnection() throws Exception {
        try (Socket s = RawHttp.connect(server.baseUrl(), PATIENCE_MS)) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            for (int i = 0; i < 3; i++) {
                s.getOutputStream()
                        .write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                assertThat(RawHttp.readResponse(in)).startsWith("HTTP/1.1 200");
            }
        }
    }

    /** While a stop is coming ({@code --shutdown-delay}) every answer closes its connection, keep-alive or not. */
    @Test
    void everyAnswerWhileAStopIsComingClosesItsConnection() throws Exception {
        try (IndexerApp stopping = IndexerApp.start(IndexerConfig.defaults())) {
            stopping.gate().shuttingDown();
            try (Socket s = RawHttp.connect(stopping.baseUrl(), PATIENCE_MS)) {
                s.getOutputStream()
                        .write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                InputStream in = new BufferedInputStream(s.getInputStream());
                assertThat(RawHttp.readResponse(in))
                        .startsWith("HTTP/1.1 200")
                        .containsIgnoringCase("\r\nConnection: close\r\n");
                assertThat(RawHttp.closed(in))
                        .as("the connection ends after the answer")
                        .isTrue();
            }
        }
    }
}
