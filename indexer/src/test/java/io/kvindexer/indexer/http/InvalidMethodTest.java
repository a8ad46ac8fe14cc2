package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.testkit.LogCapture;
import java.net.URI;
import org.junit.jupiter.api.Test;

/**
 * A request line whose method is not an HTTP token ({@code GE"T}) is the client's error: a 400 with a JSON error, as
 * every request line the server cannot parse, not the 500 Helidon answers it with, which counted as a server error
 * for an alert and logged a warning with a stack trace for each such request. The real server, whose HTTP/1 protocol
 * is ours ({@code TimedHttp1}).
 */
class InvalidMethodTest {

    @Test
    void aMethodThatIsNoTokenIsABadRequestWithNoWarning() throws Exception {
        try (IndexerApp server = IndexerApp.start(IndexerConfig.defaults());
                LogCapture helidon = LogCapture.warningsOf("io.helidon.webserver.http1.Http1Connection")) {
            int port = URI.create(server.baseUrl()).getPort();
            RawHttp.Reply reply = RawHttp.exchange(port, "GE\"T /query HTTP/1.1\r\nHost: x\r\n\r\n");
            assertThat(reply.status()).isEqualTo(400);
            assertThat(reply.header("Content-Type")).startsWith("application/json");
            assertThat(reply.body()).isEqualTo("{\"error\":\"invalid request line: its method is not an HTTP token\"}");
            // the warning would be logged before the connection is closed
            assertThat(reply.closed()).isTrue();
            assertThat(helidon.warnings()).isEmpty();
            // a method that is a token but none of the route's still gets its 405 from the route
            RawHttp.Reply other = RawHttp.exchange(port, "GE-T /query HTTP/1.1\r\nHost: x\r\n\r\n");
            assertThat(other.status()).isEqualTo(405);
        }
    }
}
