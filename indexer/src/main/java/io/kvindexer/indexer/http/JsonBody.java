package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import io.helidon.webserver.http.ServerRequest;
import io.kvindexer.indexer.json.JsonIntegers;
import io.kvindexer.indexer.json.JsonTokens;
import it.unimi.dsi.fastutil.ints.IntArrayList;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.io.IOException;
import java.io.PushbackInputStream;
import java.nio.IntBuffer;
import java.util.function.Function;

/**
 * Typed field readers over a JSON request body, on Jackson's streaming parser: no tree and no boxing, so a
 * {@code /query} of a million tokens goes straight into an {@code int[]}. The body itself is admitted (content
 * type, limits, deadline) by {@link RequestBody}. Every failure becomes an {@link ApiError} naming the field: 400
 * malformed JSON, 422 missing field / wrong type / null / out of range (Dynamo's status codes, with JSON bodies
 * instead of axum's plain text).
 */
final class JsonBody extends RequestFields implements AutoCloseable {

    private static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(64)
                    .maxNumberLength(64)
                    .build())
            .build();

    /** Reads one element of an integer array; the parser is on it. */
    @FunctionalInterface
    private interface Element {
        void read(int index) throws IOException;
    }

    private final JsonParser parser;
    private final RequestBody body; // null for a body already read whole

    private JsonBody(JsonParser parser, RequestBody body) {
        this.parser = parser;
        this.body = body;
    }

    /** Admits a JSON body, then opens its object; the parser sits on the first field. */
    static JsonBody open(ServerRequest req, long limit) {
        RequestBody admitted = RequestBody.open(req, limit, "json");
        try {
            PushbackInputStream in = new PushbackInputStream(admitted.stream(), 4);
            byte[] head = in.readNBytes(4);
            requireUtf8(head, head.length);
            in.unread(head);
            return new JsonBody(FACTORY.createParser(in), admitted).begin();
        } catch (IOException e) {
            admitted.close();
            throw new ApiError(400, "cannot read the request body: " + e.getMessage());
        } catch (ApiError e) {
            admitted.close();
            throw e;
        }
    }

    /**
     * Opens the object of a body already read whole (and admitted), the first {@code length} bytes of
     * {@code bytes}; the parser sits on the first field.
     */
    static JsonBody of(byte[] bytes, int length) {
        requireUtf8(bytes, length);
        try {
            return new JsonBody(FACTORY.createParser(bytes, 0, length), null).begin();
        } catch (IOException e) {
            throw new ApiError(400, "cannot read the request body: " + e.getMessage());
        }
    }

    /**
     * Refuses a body in UTF-16 or UTF-32, which Jackson would detect and read: JSON between systems is UTF-8 (RFC
     * 8259 section 8.1), and Dynamo answers such a body 400. UTF-8 JSON starts with two ASCII characters and holds
     * no byte 0x00, 0xFE or 0xFF, so the first four bytes show a wider encoding (RFC 4627 section 3), with or without
     * its byte order mark.
     */
    static void requireUtf8(byte[] bytes, int length) {
        String wider = widerEncoding(bytes, Math.min(length, 4));
        if (wider != null) {
            throw ApiError.badJson(
                    "request body is " + wider + ", not UTF-8: send JSON in UTF-8 (RFC 8259 section 8.1)");
        }
    }

    /** The UTF-16 or UTF-32 the first {@code n} (at most 4) bytes are in; null when they may be UTF-8. */
    private static String widerEncoding(byte[] b, int n) {
        int[] v = {-1, -1, -1, -1}; // -1: past the body's end
        for (int i = 0; i < n; i++) {
            v[i] = b[i] & 0xFF;
        }
        boolean markBe = v[0] == 0xFE && v[1] == 0xFF;
        boolean markLe = v[0] == 0xFF && v[1] == 0xFE;
        if (v[0] == 0 && v[1] == 0 && (v[2] == 0 || v[2] == 0xFE && v[3] == 0xFF)) {
            return "UTF-32BE"; // 00 00 00 xx, or its mark 00 00 FE FF
        }
        if ((v[1] == 0 || markLe) && v[2] == 0 && v[3] == 0) {
            return "UTF-32LE"; // xx 00 00 00, or its mark FF FE 00 00
        }
        if (v[0] == 0 || markBe) {
            return "UTF-16BE"; // 00 xx, or its mark FE FF
        }
        if (v[1] == 0 || markLe) {
            return "UTF-16LE"; // xx 00, or its mark FF FE
        }
        return null;
    }

    /** Reads the first token: the object's start. Closed (the deadline stopped) when it throws. */
    private JsonBody begin() {
        try {
            JsonToken first = next();
            if (first == null) {
                throw ApiError.badJson("request body is empty; expected a JSON object");
            }
            if (first != JsonToken.START_OBJECT) {
                throw ApiError.invalid("expected a JSON object, got " + JsonTokens.describe(first));
            }
            return this;
        } catch (RuntimeException e) {
            close(); // not handed to the caller's try-with-resources: stop the deadline here
            throw e;
        }
    }

    /** Admits and opens a JSON body, decodes it with {@code decode} and releases it. */
    static <T> T read(ServerRequest req, long limit, Function<JsonBody, T> decode) {
        try (JsonBody body = open(req, limit)) {
            return decode.apply(body);
        }
    }

    /** The next field name of the object, with the parser moved onto its value; null at the end of the object. */
    @Override
    String nextName() {
        JsonToken t;
        try {
            t = parser.nextToken();
        } catch (IOException e) {
            // the parser reads a field's number with its name: the name is known when the number is too long
            throw tooLong(e) ? outOfRange(parser.getParsingContext().getCurrentName()) : translate(e);
        }
        if (t == JsonToken.END_OBJECT) {
            JsonToken after = next();
            if (after != null) {
                throw ApiError.badJson("trailing characters after the JSON object at " + where());
            }
            return null;
        }
        if (t != JsonToken.FIELD_NAME) {
            throw ApiError.badJson("malformed JSON at " + where());
        }
        String name = currentName();
        try {
            parser.nextToken();
        } catch (IOException e) {
            throw tooLong(e) ? outOfRange(name) : translate(e);
        }
        return name;
    }

    /**
     * A number longer than the parser takes (64 digits), refused when the parser reaches it or its value is taken: a
     * value out of range, like any other, not bad JSON.
     */
    private static boolean tooLong(IOException e) {
        return e instanceof StreamConstraintsException
                && e.getMessage() != null
                && e.getMessage().startsWith("Number value length");
    }

    private static ApiError outOfRange(String field) {
        return ApiError.invalid("invalid value for `" + field + "`: a number of more than 64 digits is out of range");
    }

    /** Skips the value of an unknown field (nesting is bounded by the parser's constraints). */
    void skipValue() {
        try {
            parser.skipChildren();
        } catch (IOException e) {
            throw translate(e);
        }
    }

    boolean isNull() {
        return parser.currentToken() == JsonToken.VALUE_NULL;
    }

    @Override
    String rawString(String field) {
        JsonToken t = parser.currentToken();
        if (t != JsonToken.VALUE_STRING) {
            throw ApiError.invalid(
                    "invalid type for `" + field + "`: expected a string, got " + JsonTokens.describe(t));
        }
        try {
            return parser.getText();
        } catch (IOException e) {
            throw translate(e);
        }
    }

    /** A string or null. */
    String optionalString(String field) {
        return isNull() ? null : string(field);
    }

    long u64(String field) {
        requireInteger(field, "an unsigned 64-bit integer");
        try {
            if (!JsonIntegers.fitsU64(parser)) {
                throw ApiError.invalid("invalid value for `" + field + "`: " + parser.getText()
                        + (JsonIntegers.isNegativeLong(parser)
                                ? " is negative; expected an unsigned 64-bit integer"
                                : " is out of range for an unsigned 64-bit integer"));
            }
            return JsonIntegers.bits64(parser);
        } catch (IOException e) {
            throw tooLong(e) ? outOfRange(field) : translate(e);
        }
    }

    int u32(String field) {
        requireInteger(field, "an unsigned 32-bit integer");
        try {
            long v = JsonIntegers.u32(parser);
            if (v < 0) {
                throw ApiError.invalid("invalid value for `" + field + "`: " + parser.getText()
                        + " is out of range for an unsigned 32-bit integer");
            }
            return (int) v;
        } catch (IOException e) {
            throw tooLong(e) ? outOfRange(field) : translate(e);
        }
    }

    /** A u32 or null (null → the default). */
    Integer optionalU32(String field) {
        return isNull() ? null : u32(field);
    }

    @Override
    Boolean optionalBoolean(String field) {
        JsonToken t = parser.currentToken();
        if (t == JsonToken.VALUE_TRUE || t == JsonToken.VALUE_FALSE) {
            return t == JsonToken.VALUE_TRUE;
        }
        if (t == JsonToken.VALUE_NULL) {
            return null;
        }
        throw ApiError.invalid("invalid type for `" + field + "`: expected a boolean, got " + JsonTokens.describe(t));
    }

    /** An array of u32 (token ids) read straight into an {@code int[]} holding the raw 32-bit patterns. */
    IntBuffer u32Array(String field) {
        IntArrayList out = new IntArrayList(256);
        integers(field, "unsigned 32-bit integers", "an unsigned 32-bit integer", i -> {
            long v = JsonIntegers.u32(parser);
            if (v < 0) {
                throw ApiError.invalid("invalid value for `" + field + "[" + i + "]`: " + parser.getText()
                        + " is out of range for an unsigned 32-bit integer (0..4294967295)");
            }
            out.add((int) v);
        });
        return IntBuffer.wrap(out.elements(), 0, out.size());
    }

    /**
     * An array of 64-bit hashes: Dynamo takes i64 (two's complement of the u64); we also accept the unsigned
     * decimal form up to 2^64-1 that {@code /dump} prints.
     */
    long[] hashArray(String field) {
        LongArrayList out = new LongArrayList(64);
        integers(field, "64-bit integers", "a 64-bit integer", i -> {
            if (!JsonIntegers.fits64(parser)) {
                throw ApiError.invalid("invalid value for `" + field + "[" + i + "]`: " + parser.getText()
                        + " does not fit in 64 bits");
            }
            out.add(JsonIntegers.bits64(parser));
        });
        return out.toLongArray();
    }

    static ApiError missing(String field) {
        return ApiError.invalid("missing field `" + field + "`");
    }

    /** The one array loop: checks the array and each element's token, then hands each integer to {@code element}. */
    private void integers(String field, String arrayOf, String elementIs, Element element) {
        if (parser.currentToken() != JsonToken.START_ARRAY) {
            throw ApiError.invalid("invalid type for `" + field + "`: expected an array of " + arrayOf + ", got "
                    + JsonTokens.describe(parser.currentToken()));
        }
        int at = 0; // the element read, for the message of one that fails to parse
        try {
            JsonToken t;
            for (; (t = parser.nextToken()) != JsonToken.END_ARRAY; at++) {
                if (t == null) {
                    throw ApiError.badJson("unexpected end of JSON in `" + field + "`");
                }
                if (t != JsonToken.VALUE_NUMBER_INT) {
                    throw ApiError.invalid("invalid type for `" + field + "[" + at + "]`: expected " + elementIs
                            + ", got " + JsonTokens.describe(t));
                }
                element.read(at);
            }
        } catch (IOException e) {
            throw tooLong(e) ? outOfRange(field + "[" + at + "]") : translate(e);
        }
    }

    private void requireInteger(String field, String expected) {
        JsonToken t = parser.currentToken();
        if (t != JsonToken.VALUE_NUMBER_INT) {
            throw ApiError.invalid(
                    "invalid type for `" + field + "`: expected " + expected + ", got " + JsonTokens.describe(t));
        }
    }

    private JsonToken next() {
        try {
            return parser.nextToken();
        } catch (IOException e) {
            throw translate(e);
        }
    }

    private String currentName() {
        try {
            return parser.currentName();
        } catch (IOException e) {
            throw translate(e);
        }
    }

    private String where() {
        var loc = parser.currentLocation();
        return "line " + loc.getLineNr() + " column " + loc.getColumnNr();
    }

    private ApiError translate(IOException e) {
        ApiError admission = body == null ? null : body.failure(e);
        if (admission != null) {
            return admission;
        }
        if (e instanceof JsonProcessingException jpe) {
            return ApiError.badJson("invalid JSON: " + JsonTokens.problem(jpe) + " at " + where());
        }
        return new ApiError(400, "cannot read the request body: " + e.getMessage());
    }

    @Override
    public void close() {
        if (body != null) {
            body.close();
        }
        try {
            parser.close();
        } catch (IOException ignored) {
            // the request is answered either way
        }
    }
}
