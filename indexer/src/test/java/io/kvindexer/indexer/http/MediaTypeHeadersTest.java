package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.webserver.testing.junit5.ServerTest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code Content-Type} and {@code Accept} as clients get them wrong, over a socket (the in-memory client parses
 * the headers it sends): a value that is no media type is the client's error (4xx naming the header), never a 5xx.
 */
@ServerTest
@IndexerRoutes
class MediaTypeHeadersTest {

    private static final List<String> JSON_POSTS = List.of(
            "/query",
            "/query_by_hash",
            "/query_tiered_by_hash",
            "/register",
            "/unregister",
            "/register_peer",
            "/deregister_peer");

    private HttpTestClient http;

    @BeforeAll
    static void registerAWorker(HttpTestClient http) {
        http.post("/register", """
                {"instance_id":1,"endpoint":"tcp://127.0.0.1:1","model_name":"m","block_size":4}""").assertStatus(201);
    }

    @BeforeEach
    void client(HttpTestClient http) {
        this.http = http;
    }

    @ParameterizedTest(name = "Content-Type: {0}")
    @ValueSource(strings = {"application/json;", ";", "/", "text", "application/json; charset"})
    void aContentTypeThatIsNoMediaTypeIs415QuotingIt(String type) {
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        for (String route : JSON_POSTS) {
            HttpTestClient.Response r = http.postRaw(route, body, type);
            assertThat(r.status()).as("%s %s", route, r.body()).isEqualTo(415);
            assertThat(r.contentType()).startsWith("application/json");
            assertThat(r.error()).as(route).contains("`Content-Type` header `" + type + "`");
        }
    }
}
