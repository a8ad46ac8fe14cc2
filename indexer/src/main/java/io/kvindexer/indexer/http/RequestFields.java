package io.kvindexer.indexer.http;

import java.nio.IntBuffer;
import java.util.HashSet;
import java.util.List;

/**
 * The typed field readers {@link Requests} decodes a body with, whatever its encoding: {@link JsonBody} for JSON,
 * {@link MsgpackBody} for msgpack. Each failure is an {@link ApiError} with the same status and message in both,
 * naming the field. Package-private abstract methods (not an interface) so the readers stay package-private.
 */
abstract class RequestFields implements AutoCloseable {

    /** Names of the top-level object seen so far: in {@link #few} while they are few, then in {@link #many}. */
    private final String[] few = new String[8];

    private int fewCount;
    private HashSet<String> many;

    /** The name {@link #nextField} returned last. */
    private String current;

    /**
     * The next field name of the top-level object, positioned on its value; null at the end of the object. A name
     * the request reads, given twice, is refused (422 naming it), as Dynamo's serde refuses it: otherwise the last
     * one would silently win.
     */
    final String nextField() {
        String name = nextName();
        if (name != null && !firstTime(name)) {
            throw ApiError.invalid("duplicate field `" + name + "`");
        }
        current = name;
        return name;
    }

    /**
     * Skips the value of a field the request does not read. Its name is forgotten: an unknown field is ignored
     * however often it comes, as serde ignores it (no value of it can win).
     */
    final void skipUnknown() {
        forget(current);
        skipValue();
    }

    private void forget(String name) {
        if (many != null) {
            many.remove(name);
            return;
        }
        for (int i = 0; i < fewCount; i++) {
            if (few[i].equals(name)) {
                few[i] = few[--fewCount];
                few[fewCount] = null;
                return;
            }
        }
    }

    /** {@link #nextField} without the duplicate check: what each encoding reads. */
    abstract String nextName();

    private boolean firstTime(String name) {
        if (many != null) {
            return many.add(name);
        }
        for (int i = 0; i < fewCount; i++) {
            if (few[i].equals(name)) {
                return false;
            }
        }
        if (fewCount < few.length) {
            few[fewCount++] = name;
            return true;
        }
        many = new HashSet<>(List.of(few)); // a body of many (unknown) fields: no quadratic scan
        return many.add(name);
    }

    abstract void skipValue();

    /**
     * A string. Refused (422) when it holds a lone UTF-16 surrogate, which a JSON escape (backslash, {@code u},
     * four hex digits) can spell: a name with one would be stored as given, and a reader of a {@code /dump} that
     * carries it fails on it (JSON) or turns it into {@code ?} (the binary dump's UTF-8), so a replica recovering
     * from that dump would start empty or rename it.
     */
    final String string(String field) {
        String s = rawString(field);
        int at = unpairedSurrogate(s);
        if (at >= 0) {
            throw ApiError.invalid("invalid value for `" + field + "`: unpaired UTF-16 surrogate \\u"
                    + Integer.toHexString(s.charAt(at)) + " at index " + at + "; strings must be valid Unicode");
        }
        return s;
    }

    /** The string as the encoding gives it, unchecked. */
    abstract String rawString(String field);

    /** A string or null. */
    abstract String optionalString(String field);

    abstract long u64(String field);

    abstract int u32(String field);

    /** A u32 or null (null → the default). */
    abstract Integer optionalU32(String field);

    /** A boolean or null (null → the default). */
    abstract Boolean optionalBoolean(String field);

    /**
     * Token ids: u32 values as raw 32-bit patterns, over the array they were decoded into or, from a msgpack bin,
     * over the body's own bytes (no copy).
     */
    abstract IntBuffer u32Array(String field);

    /** 64-bit hashes: i64, or the unsigned form up to 2^64 - 1. */
    abstract long[] hashArray(String field);

    /** The index of the first surrogate that is not half of a pair, or -1 (no allocation: this is on every query). */
    static int unpairedSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return i;
            }
        }
        return -1;
    }

    /** Releases the reader (a streaming parser, a read deadline); nothing by default. */
    @Override
    public void close() {}
}
