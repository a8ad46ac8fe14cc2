package io.kvindexer.indexer.json;

import com.fasterxml.jackson.core.JsonParser;
import java.io.IOException;
import java.math.BigInteger;

/**
 * Range checks for the integer token under a Jackson parser, shared by the HTTP request readers and the
 * {@code /dump} codec. Our u64 values (instance ids, hashes) may arrive unsigned up to 2^64−1 (what we write) or as
 * their two's complement i64 (what Dynamo's routers send), so "fits in 64 bits" means [−2^63, 2^64). Callers check
 * first, then read, and word their own errors.
 */
public final class JsonIntegers {

    private static final BigInteger TWO_TO_64 = BigInteger.ONE.shiftLeft(64);

    private JsonIntegers() {}

    /** True when the integer is in [−2^63, 2^64): a u64, or an i64 read as its bit pattern. */
    public static boolean fits64(JsonParser p) throws IOException {
        if (p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
            return true;
        }
        BigInteger v = p.getBigIntegerValue();
        return v.signum() >= 0 && v.compareTo(TWO_TO_64) < 0;
    }

    /** True when the integer is in [0, 2^64). */
    public static boolean fitsU64(JsonParser p) throws IOException {
        return fits64(p) && !isNegativeLong(p);
    }

    /** True for a negative integer within the i64 range (the case a u64 reader names "negative"). */
    public static boolean isNegativeLong(JsonParser p) throws IOException {
        return p.getNumberType() != JsonParser.NumberType.BIG_INTEGER && p.getLongValue() < 0;
    }

    /** The 64-bit pattern of an integer that {@link #fits64 fits}: values above 2^63−1 wrap to negative longs. */
    public static long bits64(JsonParser p) throws IOException {
        return p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
                ? p.getBigIntegerValue().longValue()
                : p.getLongValue();
    }

    /** The integer as an unsigned 32-bit value in a long, or −1 when it is outside [0, 2^32). */
    public static long u32(JsonParser p) throws IOException {
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
            return -1;
        }
        long v = p.getLongValue();
        return v >= 0 && v <= 0xFFFF_FFFFL ? v : -1;
    }
}
