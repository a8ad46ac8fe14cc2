package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.webserver.testing.junit5.ServerTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * {@code Content-Type} and {@code Accept} as clients get them wrong, over a socket (the in-memory client parses
 * the headers it sends): a value that is no media type is the client's error (4xx naming the header), never a 5xx.
 */
@ServerTest
class MediaTypeHeadersTest extends OneWorkerRoutes {

    private static final List<String> JSON_POSTS = List.of(
            "/query",
            "/query_by_hash",
            "/query_tiered_by_hash",
            "/register",
            "/unregister",
            "/register_peer",
            "/deregister_peer");

    private static final String JSON = "application/json";
    private static final String MSGPACK = "application/msgpack";
    private static final String BINARY_DUMP = "application/x-kvindexer-dump";
    private static final byte[] JSON_QUERY =
            "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4]}".getBytes(StandardCharsets.UTF_8);
    private static final byte[] JSON_HASH_QUERY =
            "{\"model_name\":\"m\",\"block_hashes\":[1]}".getBytes(StandardCharsets.UTF_8);

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

    /**
     * A JSON media type as RFC 9110 lets a client write it (whitespace before a parameter's {@code ;}) or as axum,
     * Dynamo's server, takes it (any {@code application/<name>+json}) is JSON on every route; so is msgpack with
     * that whitespace.
     */
    @ParameterizedTest(name = "Content-Type: {0}")
    @ValueSource(
            strings = {
                "application/json ; charset=utf-8",
                "application/json\t;charset=utf-8",
                "application/vnd.api+json",
                "Application/Merge-Patch+JSON ; charset=utf-8"
            })
    void aJsonTypeWithWhitespaceBeforeItsParametersOrAJsonSuffixIsJson(String type) {
        HttpTestClient.Response r = http.postRaw("/query", JSON_QUERY, type);
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.json().has("scores")).as(r.body()).isTrue();
        HttpTestClient.Response peers = http.postRaw(
                "/deregister_peer", "{\"url\":\"http://nobody:1\"}".getBytes(StandardCharsets.UTF_8), type);
        assertThat(peers.status()).as(peers.body()).isEqualTo(404);
        assertThat(peers.error()).isEqualTo("peer not found");
        HttpTestClient.Response msgpack = http.postRaw("/query", msgpackQuery(), "application/msgpack ; v=1");
        assertThat(msgpack.status()).as(msgpack.body()).isEqualTo(200);
        assertThat(msgpack.contentType()).isEqualTo(MSGPACK);
    }

    /** Accept only states a preference: one that is no list of media types is answered as if it were absent. */
    @ParameterizedTest(name = "Accept: {0}")
    @ValueSource(strings = {"text", ";", "/", "application/json;", "application/msgpack;q=abc"})
    void anAcceptThatIsNoMediaTypeListIsIgnored(String accept) {
        for (String route : List.of("/query", "/query_by_hash")) {
            byte[] body = route.equals("/query") ? JSON_QUERY : JSON_HASH_QUERY;
            HttpTestClient.Response r = http.request("POST", route, JSON, body, "Accept", accept);
            assertThat(r.status()).as("%s %s", route, r.body()).isEqualTo(200);
            assertThat(r.contentType()).as(route).startsWith(JSON);
            assertThat(r.json().has("scores")).as(r.body()).isTrue();
        }
        HttpTestClient.Response dump = http.request("GET", "/dump", null, null, "Accept", accept);
        assertThat(dump.status()).as(dump.body()).isEqualTo(200);
        assertThat(dump.contentType()).startsWith(JSON);
    }

    /** Each row: the request body's type, its Accept (none when empty), the type of the answer. */
    @ParameterizedTest(name = "{0} body, Accept: {1}")
    @CsvSource(delimiter = '|', textBlock = """
            application/json    |                                                | application/json
            application/json    | application/msgpack                            | application/msgpack
            application/json    | application/json, application/msgpack;q=0.1    | application/json
            application/json    | application/msgpack;q=0.1, application/json    | application/json
            application/json    | application/json;q=0.5, application/msgpack    | application/msgpack
            application/json    | */*                                            | application/json
            application/json    | */*;q=0.1, application/msgpack                 | application/msgpack
            application/json    | application/json;q=0, */*                      | application/msgpack
            application/json    | application/json;q=0.5, application/*          | application/msgpack
            application/json    | application/*;q=0.5, application/json;q=0.6   | application/json
            application/json    | application/*;q=0.5, application/msgpack;q=0.4 | application/json
            application/json    | text/html, application/*;q=0.1                 | application/json
            application/json    | text/html                                      | application/json
            application/json    | text/plain, application/msgpack;q=0            | application/json
            application/msgpack | text/html                                      | application/msgpack
            application/msgpack |                                                | application/msgpack
            application/msgpack | application/msgpack;q=0, */*;q=0.2             | application/json
            application/msgpack | application/json                               | application/json
            application/msgpack | application/msgpack;q=0.2, application/json;q=0.9 | application/json
            application/msgpack | */*                                            | application/msgpack
            application/msgpack | application/*                                  | application/msgpack
            """)
    void theQueryAnswerIsTheAcceptedTypeOfHighestQuality(String bodyType, String accept, String answer) {
        byte[] body = bodyType.equals(MSGPACK) ? msgpackQuery() : JSON_QUERY;
        HttpTestClient.Response r = accept == null
                ? http.postRaw("/query", body, bodyType)
                : http.request("POST", "/query", bodyType, body, "Accept", accept);
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.contentType()).isEqualTo(answer);
    }

    /**
     * An {@code Accept} that refuses the default type (q=0 on a range that matches it, however general) and does not
     * take the other is a 406 with the API's JSON error quoting it, whatever the request's body.
     */
    @ParameterizedTest(name = "Accept: {0}")
    @ValueSource(
            strings = {
                "application/json;q=0",
                "application/json;q=0, application/msgpack;q=0",
                "application/*;q=0, */*",
                "*/*;q=0",
                "application/*;q=0, text/*"
            })
    void anAcceptThatTakesNeitherTypeIs406(String accept) {
        for (String route : List.of("/query", "/query_by_hash")) {
            byte[] body = route.equals("/query") ? JSON_QUERY : JSON_HASH_QUERY;
            HttpTestClient.Response r = http.request("POST", route, JSON, body, "Accept", accept);
            assertThat(r.status()).as("%s %s", route, r.body()).isEqualTo(406);
            assertThat(r.contentType()).startsWith(JSON);
            assertThat(r.error()).contains("`Accept: " + accept + "`").contains("neither");
        }
        HttpTestClient.Response dump = http.request("GET", "/dump", null, null, "Accept", accept);
        assertThat(dump.status()).as(dump.body()).isEqualTo(406);
        assertThat(dump.contentType()).startsWith(JSON);
        assertThat(dump.error()).contains("`Accept: " + accept + "`");
    }

    @ParameterizedTest(name = "Accept: {0}")
    @CsvSource(delimiter = '|', textBlock = """
            application/x-kvindexer-dump                                | application/x-kvindexer-dump
            application/x-kvindexer-dump, application/json;q=0.5        | application/x-kvindexer-dump
            application/json, application/x-kvindexer-dump;q=0.1        | application/json
            application/x-kvindexer-dump;q=0.1, application/json;q=0.2  | application/json
            */*                                                         | application/json
            application/json;q=0, */*                                   | application/x-kvindexer-dump
            */*;q=0.1, application/x-kvindexer-dump                     | application/x-kvindexer-dump
            application/json;q=0.5, application/*                       | application/x-kvindexer-dump
            """)
    void theDumpIsTheAcceptedTypeOfHighestQuality(String accept, String answer) {
        HttpTestClient.Response r = http.request("GET", "/dump", null, null, "Accept", accept);
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.contentType()).startsWith(answer);
    }

    @Test
    void theDumpWithoutAcceptIsJson() {
        HttpTestClient.Response r = http.get("/dump");
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.contentType()).startsWith(JSON);
        assertThat(r.contentType()).doesNotContain(BINARY_DUMP);
    }

    private static byte[] msgpackQuery() {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(2).packString("model_name").packString("m").packString("token_ids");
            p.packArrayHeader(4).packInt(1).packInt(2).packInt(3).packInt(4);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
