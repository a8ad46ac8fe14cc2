package io.kvindexer.indexer.http;

import java.nio.IntBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Function;

/**
 * The query routes' JSON bodies read straight from their bytes: digits go into the {@code int[]} of token ids (or
 * the {@code long[]} of hashes) with no token, text buffer or boxed number between. Jackson's number path was half
 * of a {@code /query}'s CPU (issue 19, goal 6).
 *
 * <p>It reads only what a router sends: one flat object of ASCII strings without escapes, null, true, false,
 * integers in range (non-negative, or any 64-bit value for hashes) and arrays of such integers. Anything else (an
 * escape, a nested value, a float, a leading zero, an error of any kind) throws {@link Fallback}, and
 * {@link #decode} reads the same bytes again with {@link JsonBody}, which answers every body, and words every
 * error, exactly as before. So this reader never decides an error and accepts nothing that {@link JsonBody} refuses.
 */
final class FlatJsonBody extends RequestFields {

    /** Not a body this reader takes on: {@link JsonBody} reads it. Thrown without a stack (it is not an error). */
    static final class Fallback extends RuntimeException {
        private static final Fallback INSTANCE = new Fallback();

        private Fallback() {
            super("not a flat JSON body", null, false, false);
        }
    }

    /** The largest u64 divided by ten: a 20-digit value above it (or equal, with a last digit above 5) overflows. */
    private static final long U64_TENTH = Long.divideUnsigned(-1L, 10);

    private final byte[] b;
    private final int n;
    private int p;
    private boolean first = true;

    private FlatJsonBody(byte[] bytes, int length) {
        this.b = bytes;
        this.n = length;
        ws();
        expect('{');
    }

    /**
     * Decodes a whole JSON body (the first {@code length} bytes of {@code bytes}), here when it is flat, else with
     * {@link JsonBody} (every error is worded there).
     */
    static <T> T decode(byte[] bytes, int length, Function<RequestFields, T> decode) {
        T fast;
        try {
            fast = decodeFlat(bytes, length, decode);
        } catch (Fallback notFlat) {
            try (JsonBody json = JsonBody.of(bytes, length)) {
                return decode.apply(json);
            }
        }
        return fast;
    }

    /** Decodes a flat body here; {@link Fallback} for any other. */
    static <T> T decodeFlat(byte[] bytes, int length, Function<RequestFields, T> decode) {
        return decode.apply(new FlatJsonBody(bytes, length));
    }

    @Override
    String nextName() {
        ws();
        byte c = at(p);
        if (c == '}') {
            p++;
            ws();
            if (p != n) {
                throw Fallback.INSTANCE; // trailing characters
            }
            return null;
        }
        if (!first) {
            if (c != ',') {
                throw Fallback.INSTANCE;
            }
            p++;
            ws();
        }
        first = false;
        if (at(p) != '"') {
            throw Fallback.INSTANCE;
        }
        String name = ascii();
        ws();
        expect(':');
        ws();
        return name;
    }

    @Override
    void skipValue() {
        byte c = at(p);
        if (c == '"') {
            ascii();
        } else if (c >= '0' && c <= '9') {
            unsigned(19);
        } else if (!literal()) {
            throw Fallback.INSTANCE; // arrays, objects, negative or other numbers: JsonBody skips them
        }
    }

    @Override
    String rawString(String field) {
        if (at(p) != '"') {
            throw Fallback.INSTANCE;
        }
        return ascii();
    }

    @Override
    String optionalString(String field) {
        return isNull() ? null : string(field);
    }

    @Override
    long u64(String field) {
        throw Fallback.INSTANCE; // no query field is one
    }

    @Override
    int u32(String field) {
        throw Fallback.INSTANCE;
    }

    @Override
    Integer optionalU32(String field) {
        throw Fallback.INSTANCE;
    }

    @Override
    Boolean optionalBoolean(String field) {
        if (word("true")) {
            return true;
        }
        if (word("false")) {
            return false;
        }
        if (isNull()) {
            return null;
        }
        throw Fallback.INSTANCE; // JsonBody words the error
    }

    @Override
    IntBuffer u32Array(String field) {
        expect('[');
        ws();
        int[] out = new int[(n - p) / 6 + 16];
        int count = 0;
        if (at(p) == ']') {
            p++;
            return IntBuffer.allocate(0);
        }
        while (true) {
            long v = unsigned(10);
            if (v > 0xFFFF_FFFFL) {
                throw Fallback.INSTANCE;
            }
            if (count == out.length) {
                out = Arrays.copyOf(out, count * 2);
            }
            out[count++] = (int) v;
            if (endOfElement()) {
                return IntBuffer.wrap(out, 0, count); // not trimmed: the buffer's limit says where it ends
            }
        }
    }

    @Override
    long[] hashArray(String field) {
        expect('[');
        ws();
        long[] out = new long[(n - p) / 16 + 16]; // a hash is ~20 bytes with its comma: one array, trimmed once
        int count = 0;
        if (at(p) == ']') {
            p++;
            return new long[0];
        }
        while (true) {
            long v;
            if (at(p) == '-') {
                p++;
                long magnitude = unsigned(19);
                if (magnitude == 0 || Long.compareUnsigned(magnitude, Long.MIN_VALUE) > 0) {
                    throw Fallback.INSTANCE; // -0, or below -2^63
                }
                v = -magnitude;
            } else {
                v = unsigned(20);
            }
            if (count == out.length) {
                out = Arrays.copyOf(out, count * 2);
            }
            out[count++] = v;
            if (endOfElement()) {
                return count == out.length ? out : Arrays.copyOf(out, count);
            }
        }
    }

    /** After an array element: true at the array's end (consumed), false after a comma. */
    private boolean endOfElement() {
        ws();
        byte c = at(p++);
        if (c == ']') {
            return true;
        }
        if (c != ',') {
            throw Fallback.INSTANCE;
        }
        ws();
        return false;
    }

    /**
     * An unsigned decimal of 1 to {@code maxDigits} digits without a leading zero, as a u64 bit pattern; up to 20
     * digits (2^64 - 1 at most).
     */
    private long unsigned(int maxDigits) {
        int start = p;
        long v = 0;
        int d;
        while (p < n && (d = b[p] - '0') >= 0 && d <= 9) {
            int digits = p - start;
            if (digits >= 18) {
                if (digits >= maxDigits || Long.compareUnsigned(v, U64_TENTH) > 0 || (v == U64_TENTH && d > 5)) {
                    throw Fallback.INSTANCE;
                }
            }
            v = v * 10 + d;
            p++;
        }
        int digits = p - start;
        if (digits == 0 || digits > maxDigits || (digits > 1 && b[start] == '0')) {
            throw Fallback.INSTANCE;
        }
        return v;
    }

    /** A string of printable ASCII without escapes; the parser is on its opening quote. */
    private String ascii() {
        int start = ++p;
        while (p < n) {
            byte c = b[p];
            if (c == '"') {
                p++;
                return new String(b, start, p - 1 - start, StandardCharsets.ISO_8859_1);
            }
            if (c < 0x20 || c == '\\' || c == 0x7F) { // a negative byte is non-ASCII UTF-8
                throw Fallback.INSTANCE;
            }
            p++;
        }
        throw Fallback.INSTANCE;
    }

    private boolean isNull() {
        if (at(p) == 'n') {
            if (!literal()) {
                throw Fallback.INSTANCE;
            }
            return true;
        }
        return false;
    }

    /** Consumes {@code null}, {@code true} or {@code false}; false when none starts here. */
    private boolean literal() {
        return word("null") || word("true") || word("false");
    }

    private boolean word(String w) {
        int len = w.length();
        if (n - p < len) {
            return false;
        }
        for (int i = 0; i < len; i++) {
            if (b[p + i] != w.charAt(i)) {
                return false;
            }
        }
        p += len;
        return true;
    }

    private void expect(char c) {
        if (at(p) != c) {
            throw Fallback.INSTANCE;
        }
        p++;
    }

    private byte at(int i) {
        if (i >= n) {
            throw Fallback.INSTANCE;
        }
        return b[i];
    }

    private void ws() {
        while (p < n) {
            byte c = b[p];
            if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
                return;
            }
            p++;
        }
    }
}
