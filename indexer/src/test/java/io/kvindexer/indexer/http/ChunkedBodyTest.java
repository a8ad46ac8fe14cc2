package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.testing.junit5.ServerTest;
import java.io.IOException;
import java.io.InputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Chunked request bodies over a raw socket: well-framed ones are read (and keep the connection), broken framing is
 * the client's error, a 400 that gives the reason and closes the connection (what follows on it cannot be told
 * apart from the body), never a 500. Both ways a body is read: whole ({@code /query}) and streamed into the parser
 * ({@code /register_peer}).
 */
@ServerTest
@IndexerRoutes
class ChunkedBodyTest {

    private static final String PEER = "{\"url\":\"http://q:1\"}";
    private static final String QUERY = "{\"model_name\":\"nope\",\"token_ids\":[1]}";
    private static final String LAST_CHUNK = "0\r\n\r\n";

    /** One chunk of ASCII {@code data}: its size in hex, {@code extension} after it. */
    private static String chunk(String data, String extension) {
        return Integer.toHexString(data.length()) + extension + "\r\n" + data + "\r\n";
    }

    private static String chunked(String path, String chunks) {
        return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n" + chunks;
    }

    @Test
    void aWellFramedChunkedBodyIsReadAndKeepsTheConnection(WebServer server) throws IOException {
        RawHttp.Reply peer = RawHttp.exchange(server.port(), chunked("/register_peer", chunk(PEER, "") + LAST_CHUNK));
        assertThat(peer.status()).as(peer.body()).isEqualTo(201);
        assertThat(peer.closed()).isFalse();
        RawHttp.Reply query = RawHttp.exchange(
                server.port(),
                chunked("/query", chunk(QUERY.substring(0, 16), "") + chunk(QUERY.substring(16), "") + LAST_CHUNK));
        assertThat(query.status()).as(query.body()).isEqualTo(404); // read whole, then: no such model
        assertThat(query.closed()).isFalse();
    }

    /** Helidon's chunk reader takes no chunk extensions (RFC 9112 section 7.1.1): refused, and said so. */
    @Test
    void aChunkExtensionIsA400SayingItIsNotSupported(WebServer server) throws IOException {
        assertRefused(
                server, "/register_peer", chunk(PEER, ";foo=bar") + LAST_CHUNK, "chunk extensions are not supported");
        assertRefused(server, "/query", chunk(QUERY, ";foo=bar") + LAST_CHUNK, "chunk extensions are not supported");
    }

    /**
     * Trailer fields after the last chunk (RFC 9112 section 7.1.2): Helidon's chunk reader takes none either, and
     * called them an "Invalid terminating chunk"; the 400 says what it refuses.
     */
    @Test
    void trailerFieldsAreA400SayingTheyAreNotSupported(WebServer server) throws IOException {
        String trailer = "0\r\nX-Checksum: 1\r\n\r\n";
        assertRefused(server, "/register_peer", chunk(PEER, "") + trailer, "trailer fields are not supported");
        assertRefused(server, "/query", chunk(QUERY, "") + trailer, "trailer fields are not supported");
    }

    /** Each row: a chunk-size line, and what the error must say. */
    @ParameterizedTest(name = "chunk size {0}")
    @CsvSource(delimiter = '|', textBlock = """
            zz                   | zz
            -5                   | -5
            ffffffffffffffffffff | ffffffffffffffffffff
            ffffffff             | chunk size
            """)
    void aChunkSizeThatIsNoSizeIsA400(String size, String reason, WebServer server) throws IOException {
        for (String path : new String[] {"/register_peer", "/query"}) {
            assertRefused(server, path, size + "\r\n" + PEER + "\r\n0\r\n\r\n", reason);
        }
    }

    /** A size shorter than its data: the rest of the data is read as the next size line. */
    @Test
    void aSizeThatDoesNotMatchItsDataIsA400(WebServer server) throws IOException {
        assertRefused(server, "/register_peer", "5\r\n" + PEER + "\r\n0\r\n\r\n", "chunk size");
        assertRefused(server, "/query", "5\r\n" + QUERY + "\r\n0\r\n\r\n", "chunk size");
    }

    private static void assertRefused(WebServer server, String path, String chunks, String reason) throws IOException {
        RawHttp.Reply r = RawHttp.exchange(server.port(), chunked(path, chunks));
        assertThat(r.status()).as("%s %s", path, r.body()).isEqualTo(400);
        JsonNode json = HttpTestClient.JSON.readTree(r.body());
        assertThat(json.path("error").asText())
                .as(path)
                .startsWith("malformed chunked request body")
                .containsIgnoringCase(reason);
        assertThat(r.closed()).as("%s: connection closed after the 400", path).isTrue();
    }

    /** A failure of the read that is not the framing's (here, a stand-in stream's bug) is not turned into a 400. */
    @Test
    void anotherFailureOfTheReadStaysWhatItIs() {
        InputStream failing = new InputStream() {
            @Override
            public int read() {
                throw new IllegalStateException("a bug");
            }
        };
        assertThatThrownBy(() -> new BodyFraming(failing, null).read())
                .isExactlyInstanceOf(IllegalStateException.class)
                .hasMessage("a bug");
    }
}
