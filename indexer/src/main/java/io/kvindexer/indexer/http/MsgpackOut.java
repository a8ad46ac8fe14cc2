package io.kvindexer.indexer.http;

import io.helidon.common.media.type.MediaType;
import io.helidon.common.media.type.MediaTypes;
import io.helidon.http.Header;
import io.helidon.http.HeaderNames;
import io.helidon.http.HeaderValues;
import io.helidon.http.Status;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Writes a msgpack response straight into one array, in the smallest encoding of each value (the msgpack spec's
 * formats; any decoder reads them). Answers are a few hundred bytes of short maps and strings, for which a
 * {@code MessagePacker} cost more than the bytes (a buffer per packer, a copy per string, one for the result).
 * Errors stay JSON ({@link JsonOut#error}) whatever the request's encoding.
 */
final class MsgpackOut {

    @FunctionalInterface
    interface Body {
        void write(MsgpackOut out);
    }

    /** Built once, with its HTTP/1 bytes, as Helidon's own JSON content type is. */
    private static final Header CONTENT_TYPE =
            HeaderValues.createCached(HeaderNames.CONTENT_TYPE, MsgpackBody.MEDIA_TYPE);

    private static final MediaType TYPE = MediaTypes.create(MsgpackBody.MEDIA_TYPE);

    private byte[] buf = new byte[512];
    private int size;

    private MsgpackOut() {}

    /**
     * The answer is msgpack when {@code Accept} prefers it, or (its default) when the request body was msgpack and
     * {@code Accept} does not prefer JSON ({@link Negotiation}).
     */
    static boolean wanted(ServerRequest req, boolean msgpackBody) {
        MediaType byDefault = msgpackBody ? TYPE : MediaTypes.APPLICATION_JSON;
        MediaType other = msgpackBody ? MediaTypes.APPLICATION_JSON : TYPE;
        return TYPE.equals(Negotiation.choose(req, byDefault, other));
    }

    static void send(ServerResponse res, int status, Body body) {
        MsgpackOut out = new MsgpackOut();
        body.write(out);
        res.status(Status.create(status));
        res.header(CONTENT_TYPE);
        res.send(out.buf, 0, out.size);
    }

    /** What {@code body} writes, as an array of its own. */
    static byte[] bytes(Body body) {
        MsgpackOut out = new MsgpackOut();
        body.write(out);
        return Arrays.copyOf(out.buf, out.size);
    }

    /** The encoding of a string written often (a map key), to pass to {@link #raw}. */
    static byte[] encoded(String s) {
        return bytes(out -> out.string(s));
    }

    /** Bytes that are already msgpack ({@link #encoded}). */
    MsgpackOut raw(byte[] encoded) {
        put(encoded);
        return this;
    }

    MsgpackOut mapHeader(int entries) {
        return header(entries, 0x80, 0xde);
    }

    MsgpackOut arrayHeader(int elements) {
        return header(elements, 0x90, 0xdc);
    }

    /** A fix-format header for up to 15 entries, else the 16- or 32-bit one ({@code format16 + 1}). */
    private MsgpackOut header(int n, int fix, int format16) {
        room(5);
        if (n < 16) {
            buf[size++] = (byte) (fix | n);
        } else if (n < 0x10000) {
            buf[size++] = (byte) format16;
            put16(n);
        } else {
            buf[size++] = (byte) (format16 + 1);
            put32(n);
        }
        return this;
    }

    MsgpackOut string(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        stringHeader(utf8.length);
        put(utf8);
        return this;
    }

    /** {@code value} as an unsigned decimal string (ids and ranks are map keys in the answer, as in the JSON). */
    MsgpackOut unsignedDecimal(long value) {
        if (value < 0) {
            return string(Long.toUnsignedString(value));
        }
        int digits = 1;
        for (long v = value; v >= 10; v /= 10) {
            digits++;
        }
        stringHeader(digits); // fixstr: at most 19 digits
        room(digits);
        long v = value;
        for (int i = size + digits - 1; i >= size; i--, v /= 10) {
            buf[i] = (byte) ('0' + (int) (v % 10));
        }
        size += digits;
        return this;
    }

    private void stringHeader(int length) {
        room(5);
        if (length < 32) {
            buf[size++] = (byte) (0xa0 | length);
        } else if (length < 0x100) {
            buf[size++] = (byte) 0xd9;
            buf[size++] = (byte) length;
        } else if (length < 0x10000) {
            buf[size++] = (byte) 0xda;
            put16(length);
        } else {
            buf[size++] = (byte) 0xdb;
            put32(length);
        }
    }

    /** A signed integer in its smallest format (the answer's counts are never negative). */
    MsgpackOut integer(long v) {
        room(9);
        if (v >= -32 && v < 0x80) {
            buf[size++] = (byte) v; // positive or negative fixint
        } else if (v >= 0 && v < 0x100) {
            buf[size++] = (byte) 0xcc;
            buf[size++] = (byte) v;
        } else if (v >= 0 && v < 0x10000) {
            buf[size++] = (byte) 0xcd;
            put16((int) v);
        } else if (v >= 0 && v < 0x1_0000_0000L) {
            buf[size++] = (byte) 0xce;
            put32((int) v);
        } else {
            buf[size++] = (byte) 0xd3;
            put32((int) (v >>> 32));
            put32((int) v);
        }
        return this;
    }

    MsgpackOut bool(boolean v) {
        room(1);
        buf[size++] = (byte) (v ? 0xc3 : 0xc2);
        return this;
    }

    private void put(byte[] bytes) {
        room(bytes.length);
        System.arraycopy(bytes, 0, buf, size, bytes.length);
        size += bytes.length;
    }

    private void put16(int v) {
        buf[size++] = (byte) (v >>> 8);
        buf[size++] = (byte) v;
    }

    private void put32(int v) {
        buf[size++] = (byte) (v >>> 24);
        buf[size++] = (byte) (v >>> 16);
        buf[size++] = (byte) (v >>> 8);
        buf[size++] = (byte) v;
    }

    private void room(int n) {
        if (size + n > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, size + n));
        }
    }
}
