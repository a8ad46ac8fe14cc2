package io.kvindexer.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.http.Handler;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.function.LongConsumer;
import java.util.function.ToIntFunction;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * The HTTP-and-JSON floor of {@link HttpQueryBench}: a Helidon server in the benchmark's process whose POST /query
 * reads and parses the body like a real one, then answers an empty result.
 */
final class NoopQueryServer {

    private static final byte[] EMPTY_RESULT =
            "{\"scores\":{},\"frequencies\":[],\"instances\":{}}".getBytes(StandardCharsets.UTF_8);

    private static final String MSGPACK = "application/msgpack";

    /** The empty result in msgpack: a map of "scores" {}, "frequencies" [], "instances" {}. */
    private static final byte[] EMPTY_MSGPACK = emptyMsgpack();

    private NoopQueryServer() {}

    private static byte[] emptyMsgpack() {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            p.packMapHeader(3);
            p.packString("scores").packMapHeader(0);
            p.packString("frequencies").packArrayHeader(0);
            p.packString("instances").packMapHeader(0);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Reads a msgpack map's {@code token_ids} bin of little-endian u32 into an int[] and its model name; returns the
     * token count, -1 when malformed or without a model.
     */
    static int parseMsgpackTokens(byte[] body) {
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(body)) {
            int fields = in.unpackMapHeader();
            int[] tokens = null;
            String model = null;
            for (int i = 0; i < fields; i++) {
                String field = in.unpackString();
                if (field.equals("token_ids") && in.getNextFormat().getValueType() == ValueType.BINARY) {
                    int n = in.unpackBinaryHeader();
                    tokens = new int[n / 4];
                    ByteBuffer.wrap(body, (int) in.getTotalReadBytes(), n)
                            .order(ByteOrder.LITTLE_ENDIAN)
                            .asIntBuffer()
                            .get(tokens);
                    in.readPayloadAsReference(n);
                } else if (field.equals("model_name")) {
                    model = in.unpackString();
                } else {
                    in.skipValue();
                }
            }
            return tokens != null && model != null ? tokens.length : -1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Started on a free loopback port. */
    static WebServer start() {
        JsonFactory factory = new JsonFactory();
        return WebServer.builder()
                .host("127.0.0.1")
                .port(0)
                .routing(r -> r.post("/query", parsing(body -> parseTokens(factory, body), "token_ids"))
                        .post("/query_by_hash", parsing(body -> parseHashes(factory, body), "block_hashes")))
                .build()
                .start();
    }

    /**
     * A handler that parses the body with {@code parser} and answers the empty result, or 400 naming the field. A
     * msgpack body ({@code token_ids} a bin of little-endian u32, as {@link HttpQueryBench} sends it) is parsed by
     * {@link #parseMsgpackTokens} and answered in msgpack: the floor of the msgpack {@code /query}.
     */
    private static Handler parsing(ToIntFunction<byte[]> parser, String field) {
        return (req, res) -> {
            if (req.headers()
                    .contentType()
                    .map(t -> t.mediaType().text().equals(MSGPACK))
                    .orElse(false)) {
                if (parseMsgpackTokens(req.content().as(byte[].class)) < 0) {
                    res.status(400).send("{\"error\":\"" + field + "\"}");
                    return;
                }
                res.header("Content-Type", MSGPACK).send(EMPTY_MSGPACK);
                return;
            }
            if (parser.applyAsInt(req.content().as(byte[].class)) < 0) {
                res.status(400).send("{\"error\":\"" + field + "\"}");
                return;
            }
            res.header("Content-Type", "application/json").send(EMPTY_RESULT);
        };
    }

    /** Streams a {@code /query_by_hash} body into a long[] of hashes and a model name; returns the count, -1 when malformed. */
    static int parseHashes(JsonFactory factory, byte[] body) {
        LongArrayList hashes = new LongArrayList(4_096);
        return parse(factory, body, "block_hashes", hashes::add) ? hashes.toLongArray().length : -1;
    }

    /** Streams the body into an int[] of token ids and a model name; returns the token count, -1 when malformed. */
    static int parseTokens(JsonFactory factory, byte[] body) {
        IntArrayList tokens = new IntArrayList(16_384);
        return parse(factory, body, "token_ids", v -> tokens.add((int) v)) ? tokens.toIntArray().length : -1;
    }

    /** Streams {@code arrayField}'s integers into {@code values}; false when the body is malformed or has no model. */
    private static boolean parse(JsonFactory factory, byte[] body, String arrayField, LongConsumer values) {
        try (JsonParser p = factory.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return false;
            }
            String model = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                if (arrayField.equals(field) && t == JsonToken.START_ARRAY) {
                    while (p.nextToken() == JsonToken.VALUE_NUMBER_INT) {
                        values.accept(p.getLongValue());
                    }
                } else if ("model_name".equals(field)) {
                    model = p.getText();
                } else {
                    p.skipChildren();
                }
            }
            return model != null;
        } catch (IOException e) {
            return false;
        }
    }
}
