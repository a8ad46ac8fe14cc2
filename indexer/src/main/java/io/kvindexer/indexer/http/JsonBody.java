package io.kvindexer.indexer.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.helidon.http.HeaderNames;
import io.helidon.http.HttpMediaType;
import io.helidon.webserver.http.ServerRequest;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.util.Arrays;

/**
 * Reads a JSON request body with Jackson's streaming parser: no tree and no boxing, so a {@code /query} of a
 * million tokens goes straight into an {@code int[]}. Every failure becomes an {@link ApiError} naming the field:
 * 415 wrong content type, 413 body over the limit, 400 malformed JSON, 422 missing field / wrong type / null /
 * out of range (Dynamo's status codes, with JSON bodies instead of axum's plain text).
 */
final class JsonBody extends RequestFields implements AutoCloseable {

    private static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNestingDepth(64)
                    .maxNumberLength(64)
                    .build())
            .build();
    private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
    private static final BigInteger I64_MIN = BigInteger.valueOf(Long.MIN_VALUE);

    private final JsonParser parser;
    private final long limit;
    private final BodyDeadline deadline; // null when the routing has no read deadline

    private JsonBody(JsonParser parser, long limit, BodyDeadline deadline) {
        this.parser = parser;
        this.limit = limit;
        this.deadline = deadline;
    }

    /** Checks the content type and declared length, then opens the object; the parser sits on its first field. */
    static JsonBody open(ServerRequest req, long limit) {
        HttpMediaType type = req.headers().contentType().orElse(null);
        if (type == null || !"application".equalsIgnoreCase(type.mediaType().type())
                || !"json".equalsIgnoreCase(type.mediaType().subtype())) {
            throw new ApiError(415, "expected request with `Content-Type: application/json`");
        }
        if (req.headers().contains(HeaderNames.CONTENT_LENGTH)) {
            long declared = req.headers().contentLength().orElse(0L);
            if (declared > limit) {
                throw ApiError.tooLarge(limit);
            }
        }
        BodyDeadline deadline = BodyDeadline.of(req);
        InputStream in = new Limited(req.content().inputStream(), limit, deadline);
        if (deadline != null) {
            deadline.arm();
        }
        JsonBody body = null;
        try {
            body = new JsonBody(FACTORY.createParser(in), limit, deadline);
            JsonToken first = body.next();
            if (first == null) {
                throw ApiError.badJson("request body is empty; expected a JSON object");
            }
            if (first != JsonToken.START_OBJECT) {
                throw ApiError.invalid("expected a JSON object, got " + describe(first));
            }
            return body;
        } catch (IOException e) {
            throw new ApiError(400, "cannot read the request body: " + e.getMessage());
        } catch (RuntimeException e) {
            if (body != null) {
                body.close(); // not handed to the caller's try-with-resources: disarm here
            } else if (deadline != null) {
                deadline.disarm();
            }
            throw e;
        }
    }

    /** Parses a string (used by tests and by the error texts). */
    static JsonBody of(byte[] json) {
        try {
            JsonParser p = FACTORY.createParser(json);
            JsonBody body = new JsonBody(p, json.length, null);
            JsonToken first = body.next();
            if (first != JsonToken.START_OBJECT) {
                throw ApiError.invalid("expected a JSON object, got " + describe(first));
            }
            return body;
        } catch (IOException e) {
            throw new ApiError(400, e.getMessage());
        }
    }

    /** The next field name of the object, with the parser moved onto its value; null at the end of the object. */
    String nextField() {
        JsonToken t = next();
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
        next();
        return name;
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

    String string(String field) {
        JsonToken t = parser.currentToken();
        if (t != JsonToken.VALUE_STRING) {
            throw ApiError.invalid("invalid type for `" + field + "`: expected a string, got " + describe(t));
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
        JsonToken t = parser.currentToken();
        if (t != JsonToken.VALUE_NUMBER_INT) {
            throw ApiError.invalid("invalid type for `" + field + "`: expected an unsigned 64-bit integer, got "
                    + describe(t));
        }
        try {
            return switch (parser.getNumberType()) {
                case INT, LONG -> {
                    long v = parser.getLongValue();
                    if (v < 0) {
                        throw ApiError.invalid("invalid value for `" + field + "`: " + v
                                + " is negative; expected an unsigned 64-bit integer");
                    }
                    yield v;
                }
                default -> {
                    BigInteger v = parser.getBigIntegerValue();
                    if (v.signum() < 0 || v.compareTo(U64_MAX) > 0) {
                        throw ApiError.invalid("invalid value for `" + field + "`: " + v
                                + " is out of range for an unsigned 64-bit integer");
                    }
                    yield v.longValue();
                }
            };
        } catch (IOException e) {
            throw translate(e);
        }
    }

    int u32(String field) {
        JsonToken t = parser.currentToken();
        if (t != JsonToken.VALUE_NUMBER_INT) {
            throw ApiError.invalid("invalid type for `" + field + "`: expected an unsigned 32-bit integer, got "
                    + describe(t));
        }
        try {
            if (parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                throw ApiError.invalid("invalid value for `" + field + "`: " + parser.getText()
                        + " is out of range for an unsigned 32-bit integer");
            }
            long v = parser.getLongValue();
            if (v < 0 || v > 0xFFFF_FFFFL) {
                throw ApiError.invalid("invalid value for `" + field + "`: " + v
                        + " is out of range for an unsigned 32-bit integer");
            }
            return (int) v;
        } catch (IOException e) {
            throw translate(e);
        }
    }

    /** A u32 or null (null → the default). */
    Integer optionalU32(String field) {
        return isNull() ? null : u32(field);
    }

    /** An array of u32 (token ids) read straight into an {@code int[]} holding the raw 32-bit patterns. */
    int[] u32Array(String field) {
        if (parser.currentToken() != JsonToken.START_ARRAY) {
            throw ApiError.invalid("invalid type for `" + field + "`: expected an array of unsigned 32-bit integers,"
                    + " got " + describe(parser.currentToken()));
        }
        int[] out = new int[256];
        int n = 0;
        try {
            JsonToken t;
            while ((t = parser.nextToken()) != JsonToken.END_ARRAY) {
                if (t == null) {
                    throw ApiError.badJson("unexpected end of JSON in `" + field + "`");
                }
                if (t != JsonToken.VALUE_NUMBER_INT) {
                    throw ApiError.invalid("invalid type for `" + field + "[" + n + "]`: expected an unsigned 32-bit"
                            + " integer, got " + describe(t));
                }
                long v;
                if (parser.getNumberType() == JsonParser.NumberType.INT) {
                    v = parser.getIntValue();
                } else if (parser.getNumberType() == JsonParser.NumberType.LONG) {
                    v = parser.getLongValue();
                } else {
                    v = -1;
                }
                if (v < 0 || v > 0xFFFF_FFFFL) {
                    throw ApiError.invalid("invalid value for `" + field + "[" + n + "]`: " + parser.getText()
                            + " is out of range for an unsigned 32-bit integer (0..4294967295)");
                }
                if (n == out.length) {
                    out = Arrays.copyOf(out, n * 2);
                }
                out[n++] = (int) v;
            }
        } catch (IOException e) {
            throw translate(e);
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    /**
     * An array of 64-bit hashes: Dynamo takes i64 (two's complement of the u64); we also accept the unsigned
     * decimal form up to 2^64-1 that {@code /dump} prints.
     */
    long[] hashArray(String field) {
        if (parser.currentToken() != JsonToken.START_ARRAY) {
            throw ApiError.invalid("invalid type for `" + field + "`: expected an array of 64-bit integers, got "
                    + describe(parser.currentToken()));
        }
        long[] out = new long[64];
        int n = 0;
        try {
            JsonToken t;
            while ((t = parser.nextToken()) != JsonToken.END_ARRAY) {
                if (t == null) {
                    throw ApiError.badJson("unexpected end of JSON in `" + field + "`");
                }
                if (t != JsonToken.VALUE_NUMBER_INT) {
                    throw ApiError.invalid("invalid type for `" + field + "[" + n + "]`: expected a 64-bit integer,"
                            + " got " + describe(t));
                }
                long v;
                if (parser.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
                    BigInteger b = parser.getBigIntegerValue();
                    if (b.compareTo(I64_MIN) < 0 || b.compareTo(U64_MAX) > 0) {
                        throw ApiError.invalid("invalid value for `" + field + "[" + n + "]`: " + b
                                + " does not fit in 64 bits");
                    }
                    v = b.longValue();
                } else {
                    v = parser.getLongValue();
                }
                if (n == out.length) {
                    out = Arrays.copyOf(out, n * 2);
                }
                out[n++] = v;
            }
        } catch (IOException e) {
            throw translate(e);
        }
        return Arrays.copyOf(out, n);
    }

    static ApiError missing(String field) {
        return ApiError.invalid("missing field `" + field + "`");
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
        if (deadline != null && deadline.timedOut()) {
            return new ApiError(408, "request body not received in time"); // already answered by the watchdog
        }
        if (e instanceof TooLarge) {
            return ApiError.tooLarge(limit);
        }
        if (e instanceof JsonProcessingException jpe) {
            return ApiError.badJson("invalid JSON: " + jpe.getOriginalMessage() + " at " + where());
        }
        return new ApiError(400, "cannot read the request body: " + e.getMessage());
    }

    private static String describe(JsonToken t) {
        if (t == null) {
            return "end of input";
        }
        return switch (t) {
            case VALUE_NULL -> "null";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT -> "an integer";
            case VALUE_NUMBER_FLOAT -> "a floating-point number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case START_ARRAY -> "an array";
            case START_OBJECT -> "an object";
            default -> t.asString() == null ? t.name() : t.asString();
        };
    }

    @Override
    public void close() {
        if (deadline != null) {
            deadline.disarm();
        }
        try {
            parser.close();
        } catch (IOException ignored) {
            // the request is answered either way
        }
    }

    /** Thrown by {@link Limited} when a body without (or with a lying) Content-Length grows past the limit. */
    private static final class TooLarge extends IOException {
        TooLarge() {
            super("body too large", null);
        }
    }

    /** Caps the body at the limit and stops the read deadline at the body's end, before the handler acts on it. */
    private static final class Limited extends FilterInputStream {
        private final BodyDeadline deadline;
        private long remaining;

        Limited(InputStream in, long limit, BodyDeadline deadline) {
            super(in);
            this.remaining = limit;
            this.deadline = deadline;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b < 0) {
                ended();
            } else if (--remaining < 0) {
                throw new TooLarge();
            }
            return b;
        }

        private void ended() {
            if (deadline != null) {
                deadline.disarm();
            }
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            int n = super.read(buf, off, len);
            if (n < 0) {
                ended();
            } else if (n > 0) {
                remaining -= n;
                if (remaining < 0) {
                    throw new TooLarge();
                }
            }
            return n;
        }
    }

}
