package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.testing.junit5.ServerTest;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A request body with a {@code Content-Encoding}: the server decodes none, so it is a 415 that names the coding and,
 * as RFC 9110 section 12.5.3 asks, says in {@code Accept-Encoding} what it takes; never Helidon's 400 that named
 * neither. The body was not read, so the connection is closed after the answer. {@code identity} alone is no coding:
 * such a body is read.
 */
@ServerTest
@IndexerRoutes
class ContentEncodingTest {

    private static final String QUERY = "{\"model_name\":\"nope\",\"token_ids\":[1]}";

    @ParameterizedTest(name = "Content-Encoding: {0}")
    @ValueSource(strings = {"gzip", "br", "deflate, gzip", "identity, gzip"})
    void aCodedRequestBodyIsA415NamingTheCoding(String encoding, WebServer server) throws IOException {
        RawHttp.Reply r = RawHttp.exchange(
                server.port(),
                "POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: " + encoding
                        + "\r\nContent-Length: " + QUERY.length() + "\r\n\r\n" + QUERY);
        assertThat(r.status()).as(r.body()).isEqualTo(415);
        assertThat(r.header("Content-Type")).isEqualTo("application/json");
        assertThat(HttpTestClient.JSON.readTree(r.body()).path("error").asText())
                .isEqualTo("`Content-Encoding: " + encoding + "` is not supported: send the request body"
                        + " uncompressed, without Content-Encoding");
        assertThat(r.header("Accept-Encoding")).isEqualTo("identity");
        assertThat(r.closed())
                .as("the body was not read: the connection is closed")
                .isTrue();
    }

    /** Content-Encoding lines make one list (RFC 9110 section 5.3): a coding after an identity line is refused too. */
    @Test
    void aCodingOnALaterLineIsA415NamingTheList(WebServer server) throws IOException {
        RawHttp.Reply r = RawHttp.exchange(
                server.port(),
                "POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: identity\r\n"
                        + "Content-Encoding: gzip\r\nContent-Length: " + QUERY.length() + "\r\n\r\n" + QUERY);
        assertThat(r.status()).as(r.body()).isEqualTo(415);
        assertThat(r.header("Content-Type")).isEqualTo("application/json");
        assertThat(HttpTestClient.JSON.readTree(r.body()).path("error").asText())
                .isEqualTo("`Content-Encoding: identity, gzip` is not supported: send the request body uncompressed,"
                        + " without Content-Encoding");
        assertThat(r.header("Accept-Encoding")).isEqualTo("identity");
        assertThat(r.closed())
                .as("the body was not read: the connection is closed")
                .isTrue();
    }

    /**
     * {@code identity} (any case, with spaces or tabs around it) is no coding: the body is read as it is (the route
     * answers it: no indexer for that model) and the connection stays open for the next request.
     */
    @ParameterizedTest(name = "Content-Encoding:{0}")
    @ValueSource(strings = {"identity", " IDENTITY ", "\tIdentity\t"})
    void identityIsNoCodingAndTheBodyIsRead(String encoding, WebServer server) throws IOException {
        String request = "POST /query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding:"
                + encoding + "\r\nContent-Length: " + QUERY.length() + "\r\n\r\n" + QUERY;
        try (Socket s = RawHttp.connect("http://127.0.0.1:" + server.port(), 30_000)) {
            s.getOutputStream().write((request + request).getBytes(StandardCharsets.ISO_8859_1));
            InputStream in = new BufferedInputStream(s.getInputStream());
            for (int i = 0; i < 2; i++) {
                assertThat(RawHttp.readResponse(in))
                        .as("answer " + i)
                        .startsWith("HTTP/1.1 404 ")
                        .contains("{\"error\":\"no indexer for model=");
            }
        }
    }
}
