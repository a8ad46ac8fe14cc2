package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link FlatJsonBody} against {@link JsonBody} on the same bytes: the same decoded request or the same error
 * (status and message) for every body, whether the flat reader takes it or hands it over; and the flat reader takes
 * what routers send.
 */
class FlatJsonBodyTest {

    /** What a decode gave: the request's fields as text, or the error's status and message. */
    private static String outcome(Function<RequestFields, ?> decode, Function<Function<RequestFields, ?>, ?> run) {
        try {
            return describe(run.apply(decode));
        } catch (ApiError e) {
            return e.status() + " " + e.getMessage();
        }
    }

    private static String describe(Object r) {
        if (r instanceof Requests.Query q) {
            int[] tokens = new int[q.tokenIds().remaining()];
            q.tokenIds().duplicate().get(tokens);
            return Arrays.toString(tokens) + " " + q.modelName() + " " + q.tenantId() + " " + q.loraName() + " "
                    + q.cacheSalt() + " " + q.eagle();
        }
        if (r instanceof Requests.HashQuery q) {
            return Arrays.toString(q.localHashes()) + " " + q.modelName() + " " + q.tenantId();
        }
        throw new AssertionError(r);
    }

    private static void assertSameAsJackson(String body, Function<RequestFields, ?> decode) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        String flat = outcome(decode, d -> FlatJsonBody.decode(bytes, bytes.length, d::apply));
        String jackson = outcome(decode, d -> {
            try (JsonBody json = JsonBody.of(bytes, bytes.length)) {
                return d.apply(json);
            }
        });
        assertThat(flat).as(body).isEqualTo(jackson);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"model_name\":\"m\",\"token_ids\":[1,2,3,4294967295,0]}",
                " {\n \"token_ids\" : [ 7 , 8 ] ,\t\"model_name\" : \"m\" , \"tenant_id\" : \"t\" }\r\n",
                "{\"token_ids\":[],\"model_name\":\"m\",\"lora_name\":null,\"cache_salt\":\"s\",\"x\":true,\"y\":12}",
                "{\"model_name\":\"Qwen/Qwen3-0.6B\",\"token_ids\":[5],\"token_ids\":[6]}",
                "{\"model_name\":\"m\",\"token_ids\":[1,2,3],\"is_eagle\":true}",
                "{\"model_name\":\"m\",\"token_ids\":[1,2,3],\"is_eagle\":false}",
                "{\"model_name\":\"m\",\"is_eagle\":null,\"token_ids\":[1,2,3]}",
                "{\"model_name\":\"m\",\"is_eagle\":true,\"token_ids\":[1],\"is_eagle\":true}",
                "{\"model_name\":\"m\",\"block_hashes\":[0,-1,9223372036854775807,-9223372036854775808,"
                        + "18446744073709551615,12345678901234567890]}",
                "{}",
            })
    void readsWhatRoutersSendItself(String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        Function<RequestFields, ?> decode = body.contains("block_hashes") ? Requests::queryByHash : Requests::query;
        // no Fallback: the flat reader decoded it (or found the same missing field)
        outcome(decode, d -> FlatJsonBody.decodeFlat(bytes, bytes.length, d::apply));
        assertSameAsJackson(body, decode);
    }

    @Test
    void handsOverWhatItDoesNotRead() {
        for (String body : new String[] {
            "{\"model_name\":\"m\\u0041\",\"token_ids\":[1]}", // an escape
            "{\"model_name\":\"mé\",\"token_ids\":[1]}", // non-ASCII
            "{\"model_name\":\"m\",\"token_ids\":[1],\"extra\":{\"a\":[1]}}", // a nested value
            "{\"model_name\":\"m\",\"token_ids\":[1.5]}",
        }) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            assertThatThrownBy(() -> FlatJsonBody.decodeFlat(bytes, bytes.length, Requests::query))
                    .as(body)
                    .isInstanceOf(FlatJsonBody.Fallback.class);
            assertSameAsJackson(body, Requests::query);
        }
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "   ",
                "[1,2]",
                "{\"token_ids\": [1,2,",
                "{\"token_ids\":[1],\"model_name\":\"m\"} trailing",
                "{\"token_ids\":[1],\"model_name\":\"m\"}}",
                "{\"token_ids\":[1,],\"model_name\":\"m\"}",
                "{\"token_ids\":[01],\"model_name\":\"m\"}",
                "{\"token_ids\":[-1],\"model_name\":\"m\"}",
                "{\"token_ids\":[-0],\"model_name\":\"m\"}",
                "{\"token_ids\":[4294967296],\"model_name\":\"m\"}",
                "{\"token_ids\":[99999999999999999999999],\"model_name\":\"m\"}",
                "{\"token_ids\":[1 2],\"model_name\":\"m\"}",
                "{\"token_ids\":[1e3],\"model_name\":\"m\"}",
                "{\"token_ids\":[null],\"model_name\":\"m\"}",
                "{\"token_ids\":null,\"model_name\":\"m\"}",
                "{\"token_ids\":[1],\"model_name\":null}",
                "{\"token_ids\":[1],\"model_name\":5}",
                "{\"token_ids\":[1],\"model_name\":\"m\",}",
                "{,\"token_ids\":[1],\"model_name\":\"m\"}",
                "{\"token_ids\":[1]\"model_name\":\"m\"}",
                "{\"token_ids\":[1],\"model_name\":\"m\",\"x\":nul}",
                "{\"token_ids\":[1],\"model_name\":\"m\",\"x\":01}",
                "{\"token_ids\":[1],\"model_name\":\"m\",\"lora_name\":nullx}",
                "{\"token_ids\":[1],\"model_name\":\"m\",\"is_eagle\":\"yes\"}",
                "{\"token_ids\":[1],\"model_name\":\"m\",\"is_eagle\":1}",
                "{\"token_ids\":[1],\"model_name\":\"m\",\"is_eagle\":[true]}",
                "{\"token_ids\":[1],\"model_name\":\"m\",\"is_eagle\":truex}",
                "{\"token_ids\":[1],\"model_name\":\"m\",\"is_eagle\":tru}",
                "{\"token_ids\":[1],\"model_name\":\"m\"",
                "{\"block_hashes\":[18446744073709551616],\"model_name\":\"m\"}",
                "{\"block_hashes\":[-9223372036854775809],\"model_name\":\"m\"}",
                "{\"block_hashes\":[123456789012345678901],\"model_name\":\"m\"}",
            })
    void errorsAreJacksonsOwn(String body) {
        assertSameAsJackson(body, body.contains("block_hashes") ? Requests::queryByHash : Requests::query);
    }

    /** Random bodies of both routes, then every one of them with a byte changed, cut short or doubled. */
    @Test
    void randomAndDamagedBodiesDecodeAlike() {
        SplittableRandom r = new SplittableRandom(19);
        String[] pieces = {"0", "1", "9", "-", ",", "]", "[", "\"", " ", "}", "{", ".", "e", "n", "\\", "\u00e9"};
        for (int i = 0; i < 400; i++) {
            boolean hashes = r.nextBoolean();
            StringBuilder sb = new StringBuilder("{\"model_name\":\"m\",\"")
                    .append(hashes ? "block_hashes" : "token_ids")
                    .append("\":[");
            int count = r.nextInt(6);
            for (int k = 0; k < count; k++) {
                sb.append(k == 0 ? "" : r.nextBoolean() ? "," : " , ");
                sb.append(hashes ? Long.toString(r.nextLong()) : Integer.toUnsignedString(r.nextInt()));
            }
            sb.append("]}");
            String body = sb.toString();
            Function<RequestFields, ?> decode = hashes ? Requests::queryByHash : Requests::query;
            assertSameAsJackson(body, decode);
            int at = r.nextInt(body.length());
            String piece = pieces[r.nextInt(pieces.length)];
            assertSameAsJackson(body.substring(0, at) + piece + body.substring(at + 1), decode);
            assertSameAsJackson(body.substring(0, at), decode);
            assertSameAsJackson(body.substring(0, at) + piece + body.substring(at), decode);
        }
    }
}
