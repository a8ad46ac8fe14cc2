package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.IndexerConfig;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every way a request can be wrong gets a 4xx with a JSON {@code {"error": ...}} that names the field — never a
 * 5xx, never a hang. Over a socket and in memory.
 */
abstract class RequestValidationTest extends OneWorkerRoutes {

    private static void assertError(HttpTestClient.Response r, int status, String... fragments) {
        assertThat(r.status()).as(r.body()).isEqualTo(status);
        assertThat(r.contentType()).startsWith("application/json");
        assertThat(r.error()).as(r.body()).isNotNull().contains(fragments);
    }

    @Test
    void malformedJsonIs400() {
        assertError(http.post("/query", "{\"token_ids\": [1,2,"), 400, "invalid JSON");
        assertError(http.post("/register", "{not json}"), 400, "invalid JSON");
        assertError(http.post("/query", "{\"token_ids\":[1],\"model_name\":\"m\"} trailing"), 400, "trailing");
        assertError(http.post("/register", ""), 400, "empty");
        // Jackson's reason without its internals (its source, a feature flag's name)
        HttpTestClient.Response open = http.post("/query", "{\"model_name\":\"m\"");
        assertError(open, 400, "invalid JSON: Unexpected end-of-input", "(start marker at line 1, column 1)");
        assertThat(open.error()).doesNotContain("Source", "REDACTED", "StreamReadFeature");
        HttpTestClient.Response crossed = http.post("/query", "{\"token_ids\":[1,2}");
        assertError(
                crossed, 400, "invalid JSON: Unexpected close marker '}'", "(for Array starting at line 1, column 14)");
        assertThat(crossed.error()).doesNotContain("Source", "REDACTED", "StreamReadFeature");
    }

    /**
     * A number longer than the parser takes (65 digits or more) is a value out of range, named like any other (it
     * was the parser's 400), in a field and in an array.
     */
    @Test
    void numbersTooLongForTheParserAre422NamingTheField() {
        String digits = "9".repeat(65);
        assertError(
                http.post(
                        "/register",
                        "{\"instance_id\":2,\"endpoint\":\"tcp://h:1\",\"model_name\":\"m\",\"block_size\":" + digits
                                + "}"),
                422,
                "invalid value for `block_size`",
                "more than 64 digits");
        assertError(
                http.post("/query", "{\"token_ids\":[1," + digits + "],\"model_name\":\"m\"}"),
                422,
                "invalid value for `token_ids[1]`",
                "more than 64 digits");
        assertError(
                http.post("/query_by_hash", "{\"block_hashes\":[-" + digits + "],\"model_name\":\"m\"}"),
                422,
                "`block_hashes[0]`");
    }

    /** Jackson's reason without what it says of its own settings, which are not the client's to change. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '~', textBlock = """
            {"model_name":"m","token_ids":[NaN]}           | Non-standard token 'NaN' at line 1
            {"model_name":"m","token_ids":[1],"x":+1}      | JSON spec does not allow numbers to have plus signs at line 1
            {"model_name":"m","token_ids":[1]}//           | maybe a (non-standard) comment? at line 1
            {"model_name":"m","token_ids":[1],"x":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}| exceeds the maximum allowed (64) at line 1
            """)
    void aJsonErrorSaysNothingOfTheParsersSettings(String body, String problem) {
        HttpTestClient.Response r = http.post("/query", body);
        assertError(r, 400, "invalid JSON: ", problem);
        assertThat(r.error()).doesNotContain("enable", "Feature", "StreamReadConstraints");
    }

    /** A field given twice is refused naming it (Dynamo's serde refuses it), instead of the last one winning. */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
            /register | {"instance_id":2,"endpoint":"tcp://h:1","model_name":"m","block_size":4,"model_name":"x"} | model_name
            /query    | {"model_name":"m","token_ids":[1],"model_name":"x"}                                      | model_name
            /query    | {"model_name":"m","token_ids":[1],"token_ids":[2]}                                       | token_ids
            /query    | {"model_name":"m","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"model_name":"x","token_ids":[1]} | model_name
            """)
    void duplicateFieldsAre422NamingThem(String route, String body, String field) {
        assertError(http.post(route, body), 422, "duplicate field `" + field + "`");
    }

    /** An unknown field is ignored however often it comes, as Dynamo's serde ignores it; a known one still counts. */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
            /query           | {"model_name":"m","x":1,"x":"again","token_ids":[1,2,3,4],"x":null}                    | 200
            /query           | {"model_name":"m","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"a":9,"token_ids":[1]} | 200
            /query_by_hash   | {"model_name":"m","x":[1],"block_hashes":[1],"x":{}}                                  | 200
            /deregister_peer | {"x":1,"url":"http://nobody:1","x":2}                                                 | 404
            /unregister      | {"x":1,"instance_id":9,"model_name":"m","x":2}                                        | 404
            """)
    void anUnknownFieldGivenTwiceIsIgnored(String route, String body, int status) {
        HttpTestClient.Response r = http.post(route, body);
        assertThat(r.status()).as(r.body()).isEqualTo(status);
        if (status != 200) {
            assertThat(r.error()).doesNotContain("duplicate");
        }
    }

    /** Each row: the route, the body, and what the error must name (fragments separated by " & "). */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
            /register        | {"endpoint":"tcp://h:1","model_name":"m","block_size":4}        | missing field `instance_id`
            /register        | {"instance_id":2,"model_name":"m","block_size":4}               | missing field `endpoint`
            /register        | {"instance_id":2,"endpoint":"tcp://h:1","block_size":4}         | missing field `model_name`
            /register        | {"instance_id":2,"endpoint":"tcp://h:1","model_name":"m"}       | missing field `block_size`
            /query           | {"model_name":"m"}                                              | missing field `token_ids`
            /query           | {"token_ids":[]}                                                | missing field `model_name`
            /query_by_hash   | {"model_name":"m"}                                              | missing field `block_hashes`
            /unregister      | {"instance_id":1}                                               | missing field `model_name`
            /register_peer   | {}                                                              | missing field `url`
            /deregister_peer | {"uri":"x"}                                                     | missing field `url`
            """)
    void missingFieldsAre422NamingThem(String route, String body, String fragments) {
        assertError(http.post(route, body), 422, fragments.split(" & "));
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
            /register      | {"instance_id":"1","endpoint":"tcp://h:1","model_name":"m","block_size":4}                 | `instance_id`
            /register      | {"instance_id":2,"endpoint":"tcp://h:1","model_name":null,"block_size":4}                  | `model_name` & null
            /register      | {"instance_id":2,"endpoint":"tcp://h:1","model_name":"m","tenant_id":null,"block_size":4} | `tenant_id`
            /register      | {"instance_id":2,"endpoint":"tcp://h:1","model_name":"m","block_size":4.5}                 | `block_size`
            /query         | {"token_ids":"1,2","model_name":"m"}                                                      | `token_ids`
            /query         | {"token_ids":[1,"2"],"model_name":"m"}                                                    | `token_ids[1]`
            /query         | {"token_ids":[1,[2]],"model_name":"m"}                                                    | `token_ids[1]`
            /query         | {"token_ids":[1],"model_name":7}                                                          | `model_name`
            /query         | {"token_ids":[1],"model_name":"m","is_eagle":"yes"}                                       | invalid type for `is_eagle`: expected a boolean, got a string
            /query         | {"token_ids":[1],"model_name":"m","is_eagle":1}                                           | `is_eagle` & got an integer
            /query         | {"token_ids":[[1,2],[2,3]],"model_name":"m","is_eagle":true}                              | `token_ids[0]` & got an array
            /query_by_hash | {"block_hashes":[1.5],"model_name":"m"}                                                   | `block_hashes[0]`
            /query         | [1,2,3]                                                                                   | JSON object
            """)
    void wrongTypesAndNullsAre422NamingTheField(String route, String body, String fragments) {
        assertError(http.post(route, body), 422, fragments.split(" & "));
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
            /query         | {"token_ids":[1,-1],"model_name":"m"}                                                      | `token_ids[1]` & out of range
            /query         | {"token_ids":[4294967296],"model_name":"m"}                                                | `token_ids[0]`
            /query         | {"token_ids":[99999999999999999999999],"model_name":"m"}                                   | `token_ids[0]`
            /register      | {"instance_id":18446744073709551616,"endpoint":"tcp://h:1","model_name":"m","block_size":4} | `instance_id` & out of range
            /register      | {"instance_id":-3,"endpoint":"tcp://h:1","model_name":"m","block_size":4}                  | `instance_id`
            /register      | {"instance_id":3,"endpoint":"tcp://h:1","model_name":"m","block_size":4294967296}          | `block_size`
            /register      | {"instance_id":3,"endpoint":"tcp://h:1","model_name":"m0","block_size":0}                  | `block_size` & 0 is out of range (1..2147483647 tokens)
            /register      | {"instance_id":3,"endpoint":"tcp://h:1","model_name":"m0","block_size":3000000000}         | `block_size` & 3000000000 is out of range
            /query_by_hash | {"block_hashes":[18446744073709551616],"model_name":"m"}                                   | `block_hashes[0]`
            """)
    void outOfRangeNumbersAre422(String route, String body, String fragments) {
        assertError(http.post(route, body), 422, fragments.split(" & "));
    }

    /**
     * A body in UTF-16 or UTF-32, with or without its byte order mark, is a 400 naming its encoding on every JSON
     * route, as Dynamo refuses it (RFC 8259: JSON between systems is UTF-8); Jackson would have read it. The same
     * body in UTF-8 gets the route's own answer ({@code status}).
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
            /query                | {"model_name":"m","token_ids":[1,2,3,4]}   | 200
            /query_by_hash        | {"model_name":"m","block_hashes":[1]}      | 200
            /query_tiered_by_hash | {"model_name":"m","block_hashes":[1]}      | 200
            /register             | {"instance_id":2,"model_name":"m","block_size":4} | 422
            /unregister           | {"instance_id":9,"model_name":"m"}         | 404
            /register_peer        | {}                                         | 422
            /deregister_peer      | {"url":"http://nobody:1"}                  | 404
            """)
    void aBodyInUtf16OrUtf32Is400NamingItsEncoding(String route, String body, int status) {
        assertThat(http.post(route, body).status()).isEqualTo(status);
        for (String charset : List.of("UTF-16BE", "UTF-16LE", "UTF-32BE", "UTF-32LE")) {
            for (String mark : List.of("", "\uFEFF")) {
                byte[] wide = (mark + body).getBytes(Charset.forName(charset));
                assertError(
                        http.postRaw(route, wide, "application/json"),
                        400,
                        "request body is " + charset + ", not UTF-8: send JSON in UTF-8 (RFC 8259 section 8.1)");
            }
        }
    }

    /**
     * A lone UTF-16 surrogate (a JSON escape can spell one) in any string field is refused, naming the field: stored,
     * it would break every reader of a {@code /dump} that carries it. Escaped in the CSV so the compiler keeps it.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
            /register        | {"instance_id":5,"endpoint":"tcp://h:1","model_name":"bad\\ud800surrogate","block_size":4}           | `model_name` & unpaired UTF-16 surrogate \\ud800 at index 3
            /register        | {"instance_id":5,"endpoint":"tcp://h\\udc00:1","model_name":"m","block_size":4}                   | `endpoint` & \\udc00
            /register        | {"instance_id":5,"endpoint":"tcp://h:1","model_name":"m","tenant_id":"t\\udfff","block_size":4}   | `tenant_id`
            /register        | {"instance_id":5,"endpoint":"tcp://h:1","model_name":"m","routing_group":"\\ud800","block_size":4} | `routing_group`
            /register        | {"instance_id":5,"endpoint":"tcp://h:1","model_name":"m","pod_name":"p\\ud800","block_size":4}    | `pod_name`
            /register        | {"instance_id":5,"endpoint":"tcp://h:1","model_name":"m","replay_endpoint":"\\ud800","block_size":4} | `replay_endpoint`
            /unregister      | {"instance_id":1,"model_name":"\\ud800\\ud800"}                                                  | `model_name` & at index 0
            /unregister      | {"instance_id":1,"model_name":"m","tenant_id":"\\ude00\\ud83d"}                                 | `tenant_id` & at index 0
            /query           | {"token_ids":[1],"model_name":"m\\ud800"}                                                          | `model_name`
            /query           | {"token_ids":[1],"model_name":"m","lora_name":"\\udfff"}                                          | `lora_name`
            /query           | {"token_ids":[1],"model_name":"m","cache_salt":"s\\ud800"}                                        | `cache_salt`
            /query_by_hash   | {"block_hashes":[1],"model_name":"m","tenant_id":"x\\ud800"}                                      | `tenant_id`
            /register_peer   | {"url":"http://q\\ud800:1"}                                                                        | `url`
            /deregister_peer | {"url":"http://q:1\\ud800"}                                                                        | `url`
            """)
    void aLoneSurrogateInAStringIs422NamingTheField(String route, String body, String fragments) {
        assertError(http.post(route, body), 422, fragments.split(" & "));
    }

    @Test
    void aSurrogatePairIsAString() {
        // U+1F600 as its JSON escapes: a valid name, so the answer is about the model, not the string
        assertError(
                http.post("/query", "{\"token_ids\":[1],\"model_name\":\"m\\ud83d\\ude00\"}"),
                404,
                "no indexer for model=m\ud83d\ude00");
    }

    @Test
    void aBlockSizeNoIndexCanHaveLeavesNothingBehind() {
        assertError(http.post("/register", """
                        {"instance_id":4,"endpoint":"tcp://127.0.0.1:1","model_name":"m4","block_size":0}"""), 422, "`block_size`");
        assertThat(http.get("/workers?model_name=m4").body()).isEqualTo("[]");
        assertError(http.post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"m4\"}"), 404, "model=m4");
        http.post("/register", """
                {"instance_id":4,"endpoint":"tcp://127.0.0.1:1","model_name":"m4","block_size":2}""").assertStatus(201);
        http.post("/unregister", """
                {"instance_id":4,"model_name":"m4"}""").assertStatus(200);
    }

    @Test
    void absurdNumbersAndNestingAre4xx() {
        String longNumber = "1".repeat(5000);
        HttpTestClient.Response r = http.post("/query", "{\"token_ids\":[" + longNumber + "],\"model_name\":\"m\"}");
        assertThat(r.status()).isBetween(400, 499);
        assertThat(r.error()).isNotBlank();
        String deep = "[".repeat(100_000) + "]".repeat(100_000);
        r = http.post("/query", "{\"ignored\":" + deep + ",\"token_ids\":[1],\"model_name\":\"m\"}");
        assertThat(r.status()).isBetween(400, 499);
        assertThat(r.error()).contains("nesting");
    }

    @Test
    void wrongContentTypeIs415() {
        byte[] body = "{\"url\":\"http://x\"}".getBytes(StandardCharsets.UTF_8);
        assertError(http.postRaw("/register_peer", body, "text/plain"), 415, "Content-Type: application/json");
        assertError(http.postRaw("/register_peer", body, null), 415, "Content-Type");
        assertThat(http.postRaw("/register_peer", body, "application/json; charset=utf-8")
                        .status())
                .isEqualTo(201);
    }

    @Test
    void queryBodyOverEightMiBIs413() {
        // Dynamo's query_rejects_request_bodies_over_limit: a /query body above 8 MiB is refused
        byte[] big = new byte[8 * 1024 * 1024 + 64];
        Arrays.fill(big, (byte) ' ');
        byte[] head = "{\"model_name\":\"m\",\"token_ids\":[".getBytes(StandardCharsets.UTF_8);
        System.arraycopy(head, 0, big, 0, head.length);
        assertError(http.postRaw("/query", big, "application/json"), 413, "8388608");
        // the server is still fine afterwards
        http.get("/health").assertStatus(200);
    }

    @Test
    void smallerLimitOnOtherRoutes() {
        byte[] big = new byte[(int) IndexerConfig.DEFAULT_MAX_BODY + 10];
        Arrays.fill(big, (byte) ' ');
        big[0] = '{';
        big[big.length - 1] = '}';
        assertError(http.postRaw("/register", big, "application/json"), 413, "2097152");
    }

    @Test
    void queryJustUnderTheLimitWorks() {
        // a million tokens in one request, parsed by the streaming reader
        StringBuilder sb = new StringBuilder("{\"model_name\":\"m\",\"token_ids\":[");
        for (int i = 0; i < 1_000_000; i++) {
            sb.append(i % 1000).append(',');
        }
        sb.setLength(sb.length() - 1);
        sb.append("]}");
        HttpTestClient.Response r = http.post("/query", sb.toString());
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("{\"scores\":{},\"frequencies\":[],\"instances\":{}}");
    }

    @Test
    void unknownModelIs404() {
        assertError(
                http.post("/query", "{\"token_ids\":[1,2,3,4],\"model_name\":\"nope\"}"),
                404,
                "no indexer for model=nope tenant=default");
        assertError(
                http.post("/query_by_hash", "{\"block_hashes\":[1],\"model_name\":\"m\",\"tenant_id\":\"t\"}"),
                404,
                "no indexer for model=m tenant=t");
    }

    /** An unknown model's 404 names it, but does not mirror a huge one: its first 100 characters, then "...". */
    @Test
    void anUnknownHugeModelNameIsQuotedNotMirrored() {
        String longest = "m".repeat(256); // the longest name an index can have (IndexNamesTest)
        HttpTestClient.Response r = http.post(
                "/query", "{\"token_ids\":[1],\"model_name\":\"" + longest + "\",\"tenant_id\":\"" + longest + "\"}");
        assertThat(r.status()).isEqualTo(404);
        String quoted = "m".repeat(100) + "...";
        assertThat(r.error()).isEqualTo("no indexer for model=" + quoted + " tenant=" + quoted);

        String huge = "m".repeat(1_000_000);
        r = http.post("/query", "{\"token_ids\":[1],\"model_name\":\"" + huge + "\"}");
        assertThat(r.status()).isEqualTo(422);
        assertThat(r.error()).hasSizeLessThan(200).contains("model_name");
    }

    @Test
    void unknownRouteIs404AndWrongMethodIs405() {
        assertError(http.get("/nope"), 404, "no endpoint at /nope");
        assertError(http.post("/nope", "{}"), 404, "no endpoint at /nope");
        assertError(http.get("/query"), 405, "GET is not allowed on /query; allowed: POST");
        assertError(http.post("/workers", "{}"), 405, "POST is not allowed on /workers; allowed: GET");
        assertError(http.method("DELETE", "/dump"), 405, "DELETE is not allowed on /dump");
        assertError(http.post("/health", "{}"), 405, "allowed: GET");
        // RFC 9110: a 405 says which methods the resource takes
        assertThat(http.get("/query").allow()).isEqualTo("POST");
        assertThat(http.method("PUT", "/workers").allow()).isEqualTo("GET, HEAD");
        assertThat(http.get("/nope").allow()).isEmpty();
        // HEAD: HeadRequestsTest (over a socket only: Helidon's client reads a HEAD answer's Content-Length of content)
    }

    @Test
    void aDumpFlagThatIsNeitherTrueNorFalseIs400() {
        assertError(
                http.request("GET", "/dump?registrations=maybe", null, null, "Accept", "application/x-kvindexer-dump"),
                400,
                "`registrations` must be true or false, got `maybe`");
        assertError(http.get("/dump?registrations=1"), 400, "`registrations`");
        http.get("/dump?registrations=false").assertStatus(200);
        http.get("/dump?registrations=TRUE").assertStatus(200);
    }

    @Test
    void testEndpointsAreNotMountedByDefault() {
        // Dynamo's listener_control_endpoints_are_not_mounted_by_default
        http.post("/test/pause_listener", "{\"instance_id\":1}").assertStatus(404);
        http.post("/test/resume_listener", "{\"instance_id\":1}").assertStatus(404);
    }

    @Test
    void unknownFieldsAreIgnored() {
        HttpTestClient.Response r = http.post("/query", """
                {"token_ids":[1,2,3,4],"model_name":"m","extra":{"a":[1,{"b":null}]},"lora_name":null,"cache_salt":"s"}""");
        assertThat(r.status()).as(r.body()).isEqualTo(200);
    }
}
