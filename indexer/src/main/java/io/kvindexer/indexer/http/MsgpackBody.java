package io.kvindexer.indexer.http;

import io.helidon.webserver.http.ServerRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * A msgpack request body ({@code Content-Type: application/msgpack}): a map with the same field names as the JSON.
 * Besides msgpack arrays, {@code token_ids} may be a {@code bin} of little-endian u32 (the Mooncake conductor's
 * form) and {@code block_hashes} a {@code bin} of little-endian u64. Types, ranges and missing fields fail with the
 * same status and message as the JSON path ({@link JsonBody}); what only msgpack can get wrong says "msgpack".
 */
final class MsgpackBody extends RequestFields {

    static final String MEDIA_TYPE = "application/msgpack";

    private final MessageUnpacker in;
    private final byte[] bytes;
    private final int length;
    private int fieldsLeft;

    private MsgpackBody(byte[] bytes, int length) {
        this.in = MessagePack.newDefaultUnpacker(bytes, 0, length);
        this.bytes = bytes;
        this.length = length;
    }

    /** True when the request declares a msgpack body. */
    static boolean isMsgpack(ServerRequest req) {
        return RequestBody.isApplication(RequestBody.contentType(req), "msgpack");
    }

    /** Opens a body already in memory: its first {@code length} bytes of {@code bytes}. */
    static MsgpackBody of(byte[] bytes, int length) {
        if (length == 0) {
            throw ApiError.badJson("request body is empty; expected a msgpack map");
        }
        MsgpackBody body = new MsgpackBody(bytes, length);
        try {
            ValueType t = body.in.getNextFormat().getValueType();
            if (t != ValueType.MAP) {
                throw ApiError.invalid("expected a msgpack map, got " + describe(t));
            }
            body.fieldsLeft = body.count(body.in.unpackMapHeader(), 2);
        } catch (IOException | MessagePackException e) {
            throw malformed(e);
        }
        return body;
    }

    @Override
    String nextName() {
        try {
            if (fieldsLeft == 0) {
                if (in.hasNext()) {
                    throw ApiError.badJson("trailing bytes after the msgpack map");
                }
                return null;
            }
            fieldsLeft--;
            if (in.getNextFormat().getValueType() != ValueType.STRING) {
                throw ApiError.badJson("malformed msgpack: a map key is not a string");
            }
            return text("a map key");
        } catch (IOException | MessagePackException e) {
            throw malformed(e);
        }
    }

    @Override
    void skipValue() {
        try {
            in.skipValue();
        } catch (IOException | MessagePackException e) {
            throw malformed(e);
        }
    }

    @Override
    String rawString(String field) {
        try {
            ValueType t = next();
            if (t != ValueType.STRING) {
                throw ApiError.invalid("invalid type for `" + field + "`: expected a string, got " + describe(t));
            }
            return text("`" + field + "`");
        } catch (IOException | MessagePackException e) {
            throw malformed(e);
        }
    }

    @Override
    String optionalString(String field) {
        return isNil() ? null : string(field);
    }

    @Override
    long u64(String field) {
        try {
            ValueType t = next();
            if (t != ValueType.INTEGER) {
                throw ApiError.invalid(
                        "invalid type for `" + field + "`: expected an unsigned 64-bit integer, got " + describe(t));
            }
            if (in.getNextFormat() == MessageFormat.UINT64) {
                return in.unpackBigInteger().longValue(); // 2^63 .. 2^64 - 1 as its raw pattern
            }
            long v = in.unpackLong();
            if (v < 0) {
                throw ApiError.invalid("invalid value for `" + field + "`: " + v
                        + " is negative; expected an unsigned 64-bit integer");
            }
            return v;
        } catch (IOException | MessagePackException e) {
            throw malformed(e);
        }
    }

    @Override
    int u32(String field) {
        try {
            return u32Value(field, -1);
        } catch (IOException | MessagePackException e) {
            throw malformed(e);
        }
    }

    /**
     * The next value as an unsigned 32-bit integer; errors name {@code field}, or its element {@code index} when
     * that is not negative (the name is built only then, so long token arrays allocate nothing per element).
     */
    private int u32Value(String field, int index) throws IOException {
        ValueType t = next();
        if (t != ValueType.INTEGER) {
            throw ApiError.invalid("invalid type for `" + name(field, index)
                    + "`: expected an unsigned 32-bit integer, got " + describe(t));
        }
        boolean big = in.getNextFormat() == MessageFormat.UINT64;
        long v = big ? -1 : in.unpackLong();
        if (v < 0 || v > 0xFFFF_FFFFL) {
            throw ApiError.invalid("invalid value for `" + name(field, index) + "`: "
                    + (big ? in.unpackBigInteger().toString() : Long.toString(v))
                    + " is out of range for an unsigned 32-bit integer" + (index < 0 ? "" : " (0..4294967295)"));
        }
        return (int) v;
    }

    private static String name(String field, int index) {
        return index < 0 ? field : field + "[" + index + "]";
    }

    @Override
    Integer optionalU32(String field) {
        return isNil() ? null : u32(field);
    }

    @Override
    Boolean optionalBoolean(String field) {
        if (isNil()) {
            return null;
        }
        try {
            ValueType t = next();
            if (t != ValueType.BOOLEAN) {
                throw ApiError.invalid("invalid type for `" + field + "`: expected a boolean, got " + describe(t));
            }
            return in.unpackBoolean();
        } catch (IOException | MessagePackException e) {
            throw malformed(e);
        }
    }

    @Override
    IntBuffer u32Array(String field) {
        try {
            ValueType t = next();
            if (t == ValueType.BINARY) {
                return binary(field, 4, "u32").asIntBuffer();
            }
            int[] out = new int[arrayLength(field, t, "an array of unsigned 32-bit integers")];
            for (int i = 0; i < out.length; i++) {
                out[i] = u32Value(field, i);
            }
            return IntBuffer.wrap(out);
        } catch (IOException | MessagePackException e) {
            throw malformed(e);
        }
    }

    @Override
    long[] hashArray(String field) {
        try {
            ValueType t = next();
            if (t == ValueType.BINARY) {
                LongBuffer le = binary(field, 8, "u64").asLongBuffer();
                long[] out = new long[le.remaining()];
                le.get(out);
                return out;
            }
            long[] out = new long[arrayLength(field, t, "an array of 64-bit integers")];
            for (int i = 0; i < out.length; i++) {
                out[i] = hash(field, i);
            }
            return out;
        } catch (IOException | MessagePackException e) {
            throw malformed(e);
        }
    }

    /** Element {@code index} of a hash array: any msgpack integer fits, a uint64 above 2^63 as its raw pattern. */
    private long hash(String field, int index) throws IOException {
        ValueType t = next();
        if (t != ValueType.INTEGER) {
            throw ApiError.invalid("invalid type for `" + field + "[" + index + "]`: expected a 64-bit integer,"
                    + " got " + describe(t));
        }
        return in.getNextFormat() == MessageFormat.UINT64
                ? in.unpackBigInteger().longValue()
                : in.unpackLong();
    }

    /** The length of the array whose type {@code t} was just peeked; a 422 naming {@code expected} for another type. */
    private int arrayLength(String field, ValueType t, String expected) throws IOException {
        if (t != ValueType.ARRAY) {
            throw ApiError.invalid("invalid type for `" + field + "`: expected " + expected + ", got " + describe(t));
        }
        return count(in.unpackArrayHeader(), 1);
    }

    /**
     * The string just peeked ({@code what}, for the error), decoded from the body's own bytes: {@code unpackString}
     * set up a decoder and a 16 KB char buffer per body for a few short names. Malformed UTF-8 is refused, as the JSON
     * path refuses it (msgpack-core replaced it, and a query for a garbled model name was answered 404 naming it).
     */
    private String text(String what) throws IOException {
        int n = count(in.unpackRawStringHeader(), 1);
        int at = (int) in.getTotalReadBytes();
        in.readPayloadAsReference(n);
        String s = new String(bytes, at, n, StandardCharsets.UTF_8);
        if (s.indexOf('\uFFFD') >= 0 && !validUtf8(at, n)) { // a replacement: checked again, strictly
            throw ApiError.badJson("invalid msgpack: " + what + " is not valid UTF-8");
        }
        return s;
    }

    private boolean validUtf8(int at, int n) {
        try {
            StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(bytes, at, n));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    /** A bin of little-endian {@code width}-byte values, as a view of the body's own bytes (no copy). */
    private ByteBuffer binary(String field, int width, String what) throws IOException {
        int n = count(in.unpackBinaryHeader(), 1);
        if (n % width != 0) {
            throw ApiError.invalid("invalid value for `" + field + "`: a bin of " + n + " bytes is not a whole"
                    + " number of little-endian " + what + " values");
        }
        int at = (int) in.getTotalReadBytes();
        in.readPayloadAsReference(n); // moves past the payload without copying it
        return ByteBuffer.wrap(bytes, at, n).slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * A declared element count, refused when the rest of the body cannot hold it ({@code minBytes} each), so that a
     * forged header never makes us allocate more than the body's size.
     */
    private int count(int n, int minBytes) {
        long left = length - in.getTotalReadBytes();
        if (n < 0 || (long) n * minBytes > left) {
            throw ApiError.badJson(
                    "invalid msgpack: a length of " + Integer.toUnsignedString(n) + " runs past the end of the body");
        }
        return n;
    }

    private ValueType next() throws IOException {
        return in.getNextFormat().getValueType();
    }

    private boolean isNil() {
        try {
            return in.getNextFormat() == MessageFormat.NIL && unpackNil();
        } catch (IOException | MessagePackException e) {
            throw malformed(e);
        }
    }

    private boolean unpackNil() throws IOException {
        in.unpackNil();
        return true;
    }

    private static ApiError malformed(Exception e) {
        if (e instanceof ApiError a) {
            return a;
        }
        if (e instanceof org.msgpack.core.MessageSizeException) {
            return ApiError.badJson("invalid msgpack: a declared length does not fit in 2^31 - 1");
        }
        String m = e.getMessage();
        return ApiError.badJson("invalid msgpack: " + (m == null ? e.getClass().getSimpleName() : m));
    }

    private static String describe(ValueType t) {
        return switch (t) {
            case NIL -> "null";
            case STRING -> "a string";
            case INTEGER -> "an integer";
            case FLOAT -> "a floating-point number";
            case BOOLEAN -> "a boolean";
            case ARRAY -> "an array";
            case MAP -> "an object";
            case BINARY -> "binary data";
            case EXTENSION -> "an extension value";
        };
    }
}
