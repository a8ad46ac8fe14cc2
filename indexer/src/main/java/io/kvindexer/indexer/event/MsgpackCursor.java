package io.kvindexer.indexer.event;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.function.Supplier;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * A bounded reading position in one msgpack payload held in memory.
 *
 * <p>Wraps msgpack-core's {@link MessageUnpacker} with the few reads the event schema needs, each of which checks a
 * declared length against the bytes actually left before anything is allocated: a corrupt header that declares
 * 2^31 elements fails as {@code truncated} instead of allocating. Integers keep their raw 64-bit pattern
 * ({@code uint64} above {@link Long#MAX_VALUE} included, which {@link MessageUnpacker#unpackLong()} refuses).
 */
final class MsgpackCursor implements AutoCloseable {

    private static final VarHandle SHORT_BE = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle INT_BE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);

    private final byte[] payload;
    private final int end;
    private final MessageUnpacker in;
    private final int base;
    private final Supplier<String> context;

    /**
     * A cursor over {@code payload} starting at {@code offset}.
     *
     * @param context where the caller is (e.g. "event 3 (BlockStored)"), asked only when building an error message
     */
    MsgpackCursor(byte[] payload, int offset, Supplier<String> context) {
        this(payload, offset, payload.length, context);
    }

    /** A cursor over {@code payload[offset, end)}: a value nested in a {@code bin} is read within its bounds. */
    MsgpackCursor(byte[] payload, int offset, int end, Supplier<String> context) {
        this.payload = payload;
        this.context = context;
        this.end = end;
        this.base = offset;
        this.in = MessagePack.newDefaultUnpacker(payload, offset, end - offset);
    }

    /** Absolute offset just past the last byte this cursor may read. */
    int end() {
        return end;
    }

    /** Absolute offset of the next unread byte in the payload. */
    int position() {
        return base + (int) in.getTotalReadBytes();
    }

    int remaining() {
        return end - position();
    }

    boolean hasNext() throws IOException {
        return in.hasNext();
    }

    /** The type of the next value, without consuming it. */
    ValueType peekType() throws IOException {
        return in.getNextFormat().getValueType();
    }

    void skip() throws IOException {
        in.skipValue();
    }

    void skipNil() throws IOException {
        in.unpackNil();
    }

    /**
     * For a value that may be nil: false when it is nil (then skipped), true when it is of {@code type}; anything else
     * is a decode error of {@code kind}, "<what>: expected <typeName> or nil, got <type>".
     */
    boolean nilOr(ValueType type, String typeName, DecodeErrorKind kind, Supplier<String> what)
            throws IOException, EventDecodeException {
        ValueType next = peekType();
        if (next == ValueType.NIL) {
            skipNil();
            return false;
        }
        if (next != type) {
            throw new EventDecodeException(kind, what.get() + ": expected " + typeName + " or nil, got " + next);
        }
        return true;
    }

    /** An array header whose element count fits in the bytes left (each element takes at least one byte). */
    int arrayHeader(String what) throws IOException, EventDecodeException {
        int n = in.unpackArrayHeader();
        if (n < 0 || n > remaining()) {
            throw tooLong(what, "array of " + Integer.toUnsignedString(n) + " elements");
        }
        return n;
    }

    /** A map header whose entry count fits in the bytes left (each entry takes at least two bytes). */
    int mapHeader(String what) throws IOException, EventDecodeException {
        int n = in.unpackMapHeader();
        if (n < 0 || 2L * n > remaining()) {
            throw tooLong(what, "map of " + Integer.toUnsignedString(n) + " entries");
        }
        return n;
    }

    /** A UTF-8 string; the caller has checked that the next value is a string. */
    String string(String what) throws IOException, EventDecodeException {
        int len = in.unpackRawStringHeader();
        int at = rawPayload(what, len, "string");
        return new String(payload, at, len, StandardCharsets.UTF_8);
    }

    /** True when the next value is a string equal to the ASCII {@code expected}; consumes the value either way. */
    boolean stringEquals(String what, String expected) throws IOException, EventDecodeException {
        if (peekType() != ValueType.STRING) {
            skip();
            return false;
        }
        int len = in.unpackRawStringHeader();
        int at = rawPayload(what, len, "string");
        if (len != expected.length()) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            if (payload[at + i] != (byte) expected.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The 64-bit pattern of an integer of any msgpack int format: {@code uint64} above {@link Long#MAX_VALUE}
     * comes back negative, negative ints come back as themselves (two's complement). The caller has checked
     * that the next value is an integer.
     */
    long rawLong() throws IOException {
        if (in.getNextFormat() == MessageFormat.UINT64) {
            int at = position();
            in.skipValue(); // validates that the 9 bytes are there
            return bigEndian(at + 1, 8);
        }
        return in.unpackLong();
    }

    /** True when the next value is an unsigned 64-bit integer whose value is 2^63 or above. */
    boolean nextIsUint64() throws IOException {
        return in.getNextFormat() == MessageFormat.UINT64;
    }

    /**
     * The 64-bit key of a {@code bin} digest as vLLM derives it: the last 8 bytes read big-endian; a shorter
     * digest is the big-endian value of all its bytes. The caller has checked that the next value is binary.
     */
    long binaryAsLong(String what) throws IOException, EventDecodeException {
        int len = in.unpackBinaryHeader();
        int at = rawPayload(what, len, "bin");
        int take = Math.min(len, 8);
        return bigEndian(at + len - take, take);
    }

    /**
     * Consumes a {@code bin} and returns {@code {offset, length}} of its bytes in the payload (for a value packed
     * inside it). The caller has checked that the next value is binary.
     */
    int[] binaryRange(String what) throws IOException, EventDecodeException {
        int len = in.unpackBinaryHeader();
        int at = rawPayload(what, len, "bin");
        return new int[] {at, len};
    }

    /**
     * Decodes up to {@code count} consecutive u32 integers (any non-negative msgpack int format up to 2^32 - 1)
     * straight from the payload bytes into {@code out[from..]}, in one tight loop without per-element calls or
     * allocation, and consumes them. Stops at the first value that is anything else (a pair, a string, an
     * out-of-range or truncated int) and leaves it unread; returns how many were decoded.
     */
    int u32Run(int[] out, int from, int count) throws IOException {
        int start = position();
        int p = start;
        int i = from;
        int stop = from + count;
        byte[] b = payload;
        // below this offset the widest form (5 bytes) is known to be there: no bounds check per value
        int safe = end - 5;
        while (i < stop) {
            // the forms producers write for non-negative ints, most common first, each read with one load
            while (i < stop && p <= safe) {
                int head = b[p];
                if (head == (byte) 0xCD) { // uint16
                    out[i++] = (short) SHORT_BE.get(b, p + 1) & 0xFFFF;
                    p += 3;
                } else if (head == (byte) 0xCE) { // uint32: a value above 2^31 keeps its bit pattern
                    out[i++] = (int) INT_BE.get(b, p + 1);
                    p += 5;
                } else if (head >= 0) { // positive fixint
                    out[i++] = head;
                    p++;
                } else if (head == (byte) 0xCC) { // uint8
                    out[i++] = b[p + 1] & 0xFF;
                    p += 2;
                } else {
                    break;
                }
            }
            int size = i < stop ? u32At(b, p, out, i) : 0;
            if (size == 0) {
                break;
            }
            p += size;
            i++;
        }
        if (p > start) {
            in.readPayloadAsReference(p - start);
        }
        return i - from;
    }

    /**
     * One u32 at {@code p} with its bounds checked (near the end, or a signed form): its size in bytes, or 0 when
     * it is anything else (64-bit ints, negative values, other types, truncated), which the per-element path decides.
     */
    private int u32At(byte[] b, int p, int[] out, int i) {
        int limit = end;
        if (p >= limit) {
            return 0;
        }
        int head = b[p] & 0xFF;
        int v;
        int size;
        if (head <= 0x7F) {
            v = head;
            size = 1;
        } else if ((head == 0xCC || head == 0xD0) && p + 1 < limit) { // uint8, int8
            v = head == 0xCC ? b[p + 1] & 0xFF : b[p + 1];
            size = 2;
        } else if ((head == 0xCD || head == 0xD1) && p + 2 < limit) { // uint16, int16
            v = head == 0xCD ? (short) SHORT_BE.get(b, p + 1) & 0xFFFF : (short) SHORT_BE.get(b, p + 1);
            size = 3;
        } else if ((head == 0xCE || head == 0xD2) && p + 4 < limit) { // uint32, int32
            v = (int) INT_BE.get(b, p + 1);
            if (head == 0xD2 && v < 0) {
                return 0;
            }
            out[i] = v;
            return 5;
        } else {
            return 0;
        }
        if (v < 0) {
            return 0;
        }
        out[i] = v;
        return size;
    }

    /**
     * Like {@link #u32Run} for integers of any msgpack int format, kept as their raw 64-bit pattern (block hashes):
     * stops at the first value that is not an integer (a {@code bin} digest, an error to report) and leaves it
     * unread; returns how many were decoded.
     */
    int longRun(long[] out, int count) throws IOException {
        int start = position();
        int p = start;
        int i = 0;
        byte[] b = payload;
        int limit = end;
        while (i < count && p < limit) {
            int head = b[p] & 0xFF;
            long v;
            int size;
            if (head <= 0x7F || head >= 0xE0) { // positive or negative fixint
                v = (byte) head;
                size = 1;
            } else {
                size = switch (head) {
                    case 0xCC, 0xD0 -> 2;
                    case 0xCD, 0xD1 -> 3;
                    case 0xCE, 0xD2 -> 5;
                    case 0xCF, 0xD3 -> 9;
                    default -> 0;
                };
                if (size == 0 || p + size > limit) {
                    break;
                }
                v = bigEndian(p + 1, size - 1);
                if (head >= 0xD0) { // signed: extend the sign of the narrower forms
                    int shift = 64 - 8 * (size - 1);
                    v = v << shift >> shift;
                }
            }
            out[i++] = v;
            p += size;
        }
        if (p > start) {
            in.readPayloadAsReference(p - start);
        }
        return i;
    }

    /**
     * A string that is usually one of {@code known}: the matching constant is returned without allocating, any
     * other value as a new string. The caller has checked that the next value is a string.
     */
    String knownString(String what, String[] known) throws IOException, EventDecodeException {
        int len = in.unpackRawStringHeader();
        int at = rawPayload(what, len, "string");
        for (String k : known) {
            if (k.length() == len && asciiEquals(at, k)) {
                return k;
            }
        }
        return new String(payload, at, len, StandardCharsets.UTF_8);
    }

    /**
     * When the next value is a map whose first key is {@code "type"} with a string value (how msgspec and most
     * producers write tagged events), that tag; otherwise null. Consumes nothing.
     */
    String peekLeadingTypeTag(String[] known) {
        int p = position();
        if (p >= end) {
            return null;
        }
        int head = payload[p] & 0xFF;
        if (head >= 0x80 && head <= 0x8F) {
            p += 1;
        } else if (head == 0xDE) {
            p += 3;
        } else if (head == 0xDF) {
            p += 5;
        } else {
            return null;
        }
        if (p + 5 > end || (payload[p] & 0xFF) != 0xA4 || !asciiEquals(p + 1, "type")) {
            return null;
        }
        p += 5;
        if (p >= end) {
            return null;
        }
        int str = payload[p] & 0xFF;
        int len;
        if (str >= 0xA0 && str <= 0xBF) {
            len = str & 0x1F;
            p += 1;
        } else if (str == 0xD9 && p + 1 < end) {
            len = payload[p + 1] & 0xFF;
            p += 2;
        } else {
            return null;
        }
        if (p + len > end) {
            return null;
        }
        for (String k : known) {
            if (k.length() == len && asciiEquals(p, k)) {
                return k;
            }
        }
        return new String(payload, p, len, StandardCharsets.UTF_8);
    }

    private boolean asciiEquals(int at, String expected) {
        for (int i = 0; i < expected.length(); i++) {
            if (payload[at + i] != (byte) expected.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    double floatValue() throws IOException {
        return in.unpackDouble();
    }

    @Override
    public void close() throws IOException {
        in.close();
    }

    /** Consumes {@code len} payload bytes after a str/bin header and returns where they start. */
    private int rawPayload(String what, int len, String type) throws IOException, EventDecodeException {
        if (len < 0 || len > remaining()) {
            throw tooLong(what, type + " of " + Integer.toUnsignedString(len) + " bytes");
        }
        int at = position();
        in.readPayloadAsReference(len);
        return at;
    }

    private long bigEndian(int from, int count) {
        long v = 0;
        for (int i = 0; i < count; i++) {
            v = (v << 8) | (payload[from + i] & 0xFFL);
        }
        return v;
    }

    private EventDecodeException tooLong(String what, String declared) {
        return new EventDecodeException(
                DecodeErrorKind.TRUNCATED,
                context.get() + ": " + what + ": declares " + declared + " but only " + Math.max(remaining(), 0)
                        + " bytes remain");
    }
}
