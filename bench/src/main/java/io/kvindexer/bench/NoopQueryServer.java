package io.kvindexer.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.helidon.webserver.WebServer;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The HTTP-and-JSON floor of {@link HttpQueryBench}: a Helidon server in the benchmark's process whose POST /query
 * reads and parses the body like a real one, then answers an empty result.
 */
final class NoopQueryServer {

    private static final byte[] EMPTY_RESULT =
            "{\"scores\":{},\"frequencies\":[],\"instances\":{}}".getBytes(StandardCharsets.UTF_8);

    private NoopQueryServer() {}

    /** Started on a free loopback port. */
    static WebServer start() {
        JsonFactory factory = new JsonFactory();
        return WebServer.builder()
                .host("127.0.0.1")
                .port(0)
                .routing(r -> r.post("/query", (req, res) -> {
                            byte[] body = req.content().as(byte[].class);
                            int tokens = parseTokens(factory, body);
                            if (tokens < 0) {
                                res.status(400).send("{\"error\":\"token_ids\"}");
                                return;
                            }
                            res.header("Content-Type", "application/json").send(EMPTY_RESULT);
                        })
                        .post("/query_by_hash", (req, res) -> {
                            byte[] body = req.content().as(byte[].class);
                            if (parseHashes(factory, body) < 0) {
                                res.status(400).send("{\"error\":\"block_hashes\"}");
                                return;
                            }
                            res.header("Content-Type", "application/json").send(EMPTY_RESULT);
                        }))
                .build()
                .start();
    }

    /** Streams a {@code /query_by_hash} body into a long[] of hashes and a model name; returns the count, -1 when malformed. */
    static int parseHashes(JsonFactory factory, byte[] body) {
        try (JsonParser p = factory.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return -1;
            }
            LongArrayList hashes = new LongArrayList(4_096);
            String model = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                if ("block_hashes".equals(field) && t == JsonToken.START_ARRAY) {
                    while (p.nextToken() == JsonToken.VALUE_NUMBER_INT) {
                        hashes.add(p.getLongValue());
                    }
                } else if ("model_name".equals(field)) {
                    model = p.getText();
                } else {
                    p.skipChildren();
                }
            }
            return model == null ? -1 : hashes.toLongArray().length;
        } catch (IOException e) {
            return -1;
        }
    }

    /** Streams the body into an int[] of token ids and a model name; returns the token count, -1 when malformed. */
    static int parseTokens(JsonFactory factory, byte[] body) {
        try (JsonParser p = factory.createParser(body)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return -1;
            }
            IntArrayList tokens = new IntArrayList(16_384);
            String model = null;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                if ("token_ids".equals(field) && t == JsonToken.START_ARRAY) {
                    while (p.nextToken() == JsonToken.VALUE_NUMBER_INT) {
                        tokens.add((int) p.getLongValue());
                    }
                } else if ("model_name".equals(field)) {
                    model = p.getText();
                } else {
                    p.skipChildren();
                }
            }
            return model == null ? -1 : tokens.toIntArray().length;
        } catch (IOException e) {
            return -1;
        }
    }
}
