package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.testing.junit5.ServerTest;
import java.io.IOException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A request body with a {@code Content-Encoding}: the server decodes none, so it is a 415 that names the coding and,
 * as RFC 9110 section 12.5.3 asks, says in {@code Accept-Encoding} what it takes; never Helidon's 400 that named
 * neither. The body was not read, so the connection is closed after the answer.
 */
@ServerTest
@IndexerRoutes
class ContentEncodingTest {

    private static final String QUERY = "{\"model_name\":\"nope\",\"token_ids\":[1]}";

    @ParameterizedTest(name = "Content-Encoding: {0}")
    @ValueSource(strings = {"gzip", "br", "deflate, gzip", "identity"})
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
}
