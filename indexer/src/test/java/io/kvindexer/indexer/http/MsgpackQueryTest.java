package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.event.Msgpack;
import io.kvindexer.indexer.index.ModelIndex;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.Value;

/**
 * {@code /query} and {@code /query_by_hash} with msgpack bodies against a real server: arrays and little-endian
 * {@code bin}s give the JSON path's answer, in msgpack of the same shape; every invalid body gets the JSON path's
 * status and JSON error message.
 */
class MsgpackQueryTest {

    private static final String MSGPACK = "application/msgpack";
    private static IndexerApp app;
    private static final HttpClient CLIENT = HttpClient.newHttpClient();
    /** engine hashes of the stored chain: the largest is above 2^63 */
    private static final long[] ENGINE = {101, 102, -5L};

    @BeforeAll
    static void start() throws Exception {
        app = IndexerApp.start(IndexerConfig.defaults()
                .with(c -> c.limits = IndexerConfig.defaults().limits()));
        ModelIndex llama = app.indexers().getOrCreate("llama", "t", 4);
        llama.submit(
                new WorkerKey(1, 0),
                java.util.List.<KvEvent>of(
                        new BlockStored(ENGINE, false, 0, range(1, 12), 4, null, StorageTier.DEVICE, null, false)));
        llama.submit(
                new WorkerKey(-2L, 3),
                java.util.List.<KvEvent>of(new BlockStored(
                        new long[] {101}, false, 0, range(1, 4), 4, null, StorageTier.HOST_PINNED, null, false)));
        // SGLang with EAGLE: two blocks of bigrams over tokens 1..9 (windows 1..5 and 5..9)
        app.indexers()
                .getOrCreate("sglang", "default", 4)
                .submit(
                        new WorkerKey(7, 0),
                        java.util.List.<KvEvent>of(new BlockStored(
                                new long[] {301, 302},
                                false,
                                0,
                                range(1, 9),
                                4,
                                null,
                                StorageTier.DEVICE,
                                null,
                                true)));
        app.indexers().flushAll().get(30, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stop() {
        app.close();
    }

    private static int[] range(int from, int to) {
        return IntStream.rangeClosed(from, to).toArray();
    }

    record Reply(int status, String contentType, byte[] body) {
        JsonNode tree() throws IOException {
            return contentType.startsWith(MSGPACK) ? fromMsgpack(body) : HttpTestClient.JSON.readTree(body);
        }

        String error() throws IOException {
            assertThat(contentType).startsWith("application/json");
            return HttpTestClient.JSON.readTree(body).path("error").asText(null);
        }
    }

    static Reply post(String path, byte[] body, String contentType, String accept) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(app.baseUrl() + path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .header("Content-Type", contentType);
        if (accept != null) {
            b.header("Accept", accept);
        }
        HttpResponse<byte[]> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
        return new Reply(r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
    }

    static Reply json(String path, String body) throws Exception {
        return post(path, body.getBytes(StandardCharsets.UTF_8), "application/json", null);
    }

    /** A msgpack map from alternating keys and values (String, Long, int[] as array, byte[] as bin, null). */
    static byte[] msgpack(Object... kv) {
        return Msgpack.pack(Msgpack.map(kv));
    }

    /** A map that gives {@code model_name} twice (a map of ours cannot: its keys are unique). */
    private static byte[] duplicateModelName() throws IOException {
        try (org.msgpack.core.MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(3);
            p.packString("model_name").packString("llama");
            p.packString("token_ids").packArrayHeader(1).packInt(1);
            p.packString("model_name").packString("x");
            return p.toByteArray();
        }
    }

    static byte[] u32le(int... v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        b.asIntBuffer().put(v);
        return b.array();
    }

    static byte[] u64le(long... v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 8).order(ByteOrder.LITTLE_ENDIAN);
        b.asLongBuffer().put(v);
        return b.array();
    }

    /** A msgpack document as a Jackson tree (map keys are strings here, as in the JSON). */
    static JsonNode fromMsgpack(byte[] bytes) throws IOException {
        try (MessageUnpacker u = MessagePack.newDefaultUnpacker(bytes)) {
            JsonNode node = toJson(u.unpackValue());
            assertThat(u.hasNext()).isFalse();
            return node;
        }
    }

    private static JsonNode toJson(Value v) {
        JsonNodeFactory f = JsonNodeFactory.instance;
        return switch (v.getValueType()) {
            case MAP -> {
                ObjectNode o = f.objectNode();
                for (Map.Entry<Value, Value> e : v.asMapValue().entrySet()) {
                    o.set(e.getKey().asStringValue().asString(), toJson(e.getValue()));
                }
                yield o;
            }
            case ARRAY -> {
                ArrayNode a = f.arrayNode();
                v.asArrayValue().forEach(x -> a.add(toJson(x)));
                yield a;
            }
            case INTEGER -> f.numberNode(v.asIntegerValue().asLong());
            case STRING -> f.textNode(v.asStringValue().asString());
            case BOOLEAN -> f.booleanNode(v.asBooleanValue().getBoolean());
            default -> throw new IllegalArgumentException(v.toString());
        };
    }

    @Test
    void tokenIdsAsArrayOrLittleEndianBinGiveTheJsonAnswerInMsgpack() throws Exception {
        Reply expected =
                json("/query", "{\"model_name\":\"llama\",\"tenant_id\":\"t\",\"token_ids\":[1,2,3,4,5,6,7,8,9]}");
        assertThat(expected.status()).isEqualTo(200);
        assertThat(expected.tree().at("/scores/1/0").asInt()).isEqualTo(8);
        assertThat(expected.tree().at("/instances/18446744073709551614/cpu").asInt())
                .isEqualTo(4);
        for (Object tokens : new Object[] {range(1, 9), u32le(range(1, 9))}) {
            Reply r = post(
                    "/query", msgpack("model_name", "llama", "routing_group", "t", "token_ids", tokens), MSGPACK, null);
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.contentType()).startsWith(MSGPACK);
            assertThat(r.tree().toString()).isEqualTo(expected.tree().toString());
        }
    }

    /** {@code is_eagle} in a msgpack map (a msgpack boolean; nil is absent) hashes EAGLE windows as JSON's does. */
    @Test
    void isEagleInMsgpackHashesEagleWindowsAsInJson() throws Exception {
        Reply expected =
                json("/query", "{\"model_name\":\"sglang\",\"token_ids\":[1,2,3,4,5,6,7,8,9],\"is_eagle\":true}");
        assertThat(expected.tree().at("/scores/7/0").asInt()).isEqualTo(8);
        for (Object tokens : new Object[] {range(1, 9), u32le(range(1, 9))}) {
            Reply r = post(
                    "/query", msgpack("model_name", "sglang", "token_ids", tokens, "is_eagle", true), MSGPACK, null);
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.tree().toString()).isEqualTo(expected.tree().toString());
            for (Object off : new Object[] {false, null}) {
                Reply plain = post(
                        "/query", msgpack("model_name", "sglang", "token_ids", tokens, "is_eagle", off), MSGPACK, null);
                assertThat(plain.tree().path("scores").toString())
                        .as("is_eagle %s", off)
                        .isEqualTo("{}");
            }
        }
        // 8 tokens hold one EAGLE window of 5 (the second lacks its extra token): 4 tokens, as one block counts
        Reply one = post(
                "/query", msgpack("model_name", "sglang", "token_ids", range(1, 8), "is_eagle", true), MSGPACK, null);
        assertThat(one.tree().at("/scores/7/0").asInt()).isEqualTo(4);
    }

    @Test
    void blockHashesAsArrayOrLittleEndianBinGiveTheJsonAnswer() throws Exception {
        long[] local = app.indexers().get("llama", "t").orElseThrow().localHashes(range(1, 12), null, null);
        StringBuilder arr = new StringBuilder();
        for (long h : local) {
            arr.append(arr.isEmpty() ? "" : ",").append(h);
        }
        Reply expected =
                json("/query_by_hash", "{\"model_name\":\"llama\",\"tenant_id\":\"t\",\"block_hashes\":[" + arr + "]}");
        assertThat(expected.tree().at("/scores/1/0").asInt()).isEqualTo(12);
        for (Object hashes : new Object[] {local, u64le(local)}) {
            Reply r = post(
                    "/query_by_hash",
                    msgpack("model_name", "llama", "tenant_id", "t", "block_hashes", hashes),
                    MSGPACK,
                    null);
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.tree().toString()).isEqualTo(expected.tree().toString());
        }
    }

    @Test
    void acceptMsgpackOnAJsonRequestAnswersMsgpackAndJsonStaysTheDefault() throws Exception {
        String q = "{\"model_name\":\"llama\",\"tenant_id\":\"t\",\"token_ids\":[1,2,3,4]}";
        Reply plain = json("/query", q);
        assertThat(plain.contentType()).startsWith("application/json");
        Reply packed = post("/query", q.getBytes(StandardCharsets.UTF_8), "application/json", MSGPACK);
        assertThat(packed.contentType()).startsWith(MSGPACK);
        assertThat(packed.tree().toString()).isEqualTo(plain.tree().toString());
        Reply wildcard = post("/query", q.getBytes(StandardCharsets.UTF_8), "application/json", "*/*");
        assertThat(new String(wildcard.body(), StandardCharsets.UTF_8))
                .isEqualTo(new String(plain.body(), StandardCharsets.UTF_8));
    }

    @Test
    void invalidMsgpackBodiesGetTheJsonPathsStatusAndMessage() throws Exception {
        // {msgpack body, the equivalent JSON body}
        Object[][] cases = {
            {msgpack("token_ids", range(1, 4)), "{\"token_ids\":[1,2,3,4]}"},
            {msgpack("model_name", "llama"), "{\"model_name\":\"llama\"}"},
            {msgpack("model_name", 7L, "token_ids", range(1, 4)), "{\"model_name\":7,\"token_ids\":[1,2,3,4]}"},
            {msgpack("model_name", null, "token_ids", range(1, 4)), "{\"model_name\":null,\"token_ids\":[1]}"},
            {msgpack("model_name", "llama", "token_ids", "1,2"), "{\"model_name\":\"llama\",\"token_ids\":\"1,2\"}"},
            {msgpack("model_name", "llama", "token_ids", -1L), "{\"model_name\":\"llama\",\"token_ids\":-1}"},
            {
                msgpack("model_name", "llama", "token_ids", new long[] {1, 1L << 32}),
                "{\"model_name\":\"llama\",\"token_ids\":[1,4294967296]}"
            },
            {msgpack("model_name", "nope", "token_ids", range(1, 4)), "{\"model_name\":\"nope\",\"token_ids\":[1]}"},
            {duplicateModelName(), "{\"model_name\":\"llama\",\"token_ids\":[1],\"model_name\":\"x\"}"},
            {
                msgpack("model_name", "llama", "token_ids", range(1, 4), "is_eagle", "yes"),
                "{\"model_name\":\"llama\",\"token_ids\":[1],\"is_eagle\":\"yes\"}"
            },
            {
                msgpack("model_name", "llama", "token_ids", range(1, 4), "is_eagle", 1L),
                "{\"model_name\":\"llama\",\"token_ids\":[1],\"is_eagle\":1}"
            },
        };
        for (Object[] c : cases) {
            Reply fromJson = json("/query", (String) c[1]);
            Reply fromMsgpack = post("/query", (byte[]) c[0], MSGPACK, null);
            assertThat(fromJson.status()).as(c[1].toString()).isBetween(400, 499);
            assertThat(fromMsgpack.status()).as(c[1].toString()).isEqualTo(fromJson.status());
            assertThat(fromMsgpack.error()).as(c[1].toString()).isEqualTo(fromJson.error());
        }
        assertThat(post("/query", duplicateModelName(), MSGPACK, null).error())
                .isEqualTo("duplicate field `model_name`");
        Reply hashes =
                post("/query_by_hash", msgpack("model_name", "llama", "block_hashes", new int[] {1}), MSGPACK, null);
        assertThat(hashes.status()).isEqualTo(404); // an array of small ints is fine; the index is llama:default
        Reply badHash = post("/query_by_hash", msgpack("model_name", "llama", "block_hashes", "x"), MSGPACK, null);
        assertThat(badHash.error())
                .isEqualTo(json("/query_by_hash", "{\"model_name\":\"llama\",\"block_hashes\":\"x\"}")
                        .error());
    }

    @Test
    void aBodyReadIntoAnArrayLeftLongerByAPreviousOneEndsAtItsOwnLength() throws Exception {
        // bodies are read into reused arrays: a short body after a longer one must not see the longer one's tail
        byte[] good = msgpack("model_name", "llama", "tenant_id", "t", "token_ids", range(1, 9));
        String json = "{\"model_name\":\"llama\",\"tenant_id\":\"t\",\"token_ids\":[1,2,3,4,5,6,7,8,9]}";
        for (int i = 0; i < 3; i++) {
            assertThat(post("/query", good, MSGPACK, null).status()).isEqualTo(200);
            assertError(
                    post("/query", java.util.Arrays.copyOf(good, good.length - 2), MSGPACK, null),
                    400,
                    "invalid msgpack");
            assertThat(json("/query", json).status()).isEqualTo(200);
            assertThat(json("/query", json.substring(0, json.length() - 1)).status())
                    .isEqualTo(400);
        }
    }

    @Test
    void whatOnlyMsgpackCanGetWrongIsA4xxNamingIt() throws Exception {
        byte[] good = msgpack("model_name", "llama", "tenant_id", "t", "token_ids", range(1, 4));
        assertError(
                post("/query", msgpack("model_name", "llama", "token_ids", new byte[7]), MSGPACK, null),
                422,
                "`token_ids`: a bin of 7 bytes is not a whole number of little-endian u32 values");
        assertError(
                post("/query_by_hash", msgpack("model_name", "llama", "block_hashes", new byte[12]), MSGPACK, null),
                422,
                "`block_hashes`: a bin of 12 bytes is not a whole number of little-endian u64 values");
        assertError(
                post("/query", java.util.Arrays.copyOf(good, good.length - 3), MSGPACK, null), 400, "invalid msgpack");
        assertError(post("/query", java.util.Arrays.copyOf(good, good.length + 1), MSGPACK, null), 400, "trailing");
        assertError(post("/query", new byte[0], MSGPACK, null), 400, "empty");
        // malformed UTF-8 is refused as the JSON path refuses it, not decoded into a name that matches nothing
        byte[] badName = msgpack("model_name", "ll", "token_ids", range(1, 4));
        int name = indexOf(badName, "ll".getBytes(StandardCharsets.US_ASCII));
        badName[name] = (byte) 0xff;
        badName[name + 1] = (byte) 0xfe;
        assertError(post("/query", badName, MSGPACK, null), 400, "invalid msgpack: `model_name` is not valid UTF-8");
        byte[] badKey = msgpack("model_name", "llama", "token_ids", range(1, 4));
        badKey[indexOf(badKey, "model_name".getBytes(StandardCharsets.US_ASCII))] = (byte) 0xc0;
        assertError(post("/query", badKey, MSGPACK, null), 400, "invalid msgpack: a map key is not valid UTF-8");
        assertError(
                post("/query", new byte[] {(byte) 0x93, 1, 2, 3}, MSGPACK, null),
                422,
                "expected a msgpack map, got an array");
        // a forged array header (2^31 - 1 elements) in a tiny body is refused before anything is allocated
        byte[] forged = {
            (byte) 0x82,
            (byte) 0xaa,
            'm',
            'o',
            'd',
            'e',
            'l',
            '_',
            'n',
            'a',
            'm',
            'e',
            (byte) 0xa1,
            'x',
            (byte) 0xa9,
            't',
            'o',
            'k',
            'e',
            'n',
            '_',
            'i',
            'd',
            's',
            (byte) 0xdd,
            0x7f,
            -1,
            -1,
            -1
        };
        assertError(post("/query", forged, MSGPACK, null), 400, "runs past the end of the body");
        forged[forged.length - 4] = -1; // 2^32 - 1: beyond what msgpack-core reads as a Java int
        assertError(post("/query", forged, MSGPACK, null), 400, "invalid msgpack");
        assertError(
                post("/query", new byte[(int) IndexerConfig.defaults().maxQueryBodyBytes() + 10], MSGPACK, null),
                413,
                "larger than the limit");
    }

    private static int indexOf(byte[] in, byte[] part) {
        for (int i = 0; i + part.length <= in.length; i++) {
            if (java.util.Arrays.equals(in, i, i + part.length, part, 0, part.length)) {
                return i;
            }
        }
        throw new AssertionError("not found");
    }

    private static void assertError(Reply r, int status, String fragment) throws IOException {
        assertThat(r.status()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(status);
        assertThat(r.error()).contains(fragment);
    }
}
