package io.kvindexer.indexer.registry;

import java.math.BigInteger;

/** Strict decimal parsing of u64/u32 with the messages of Rust's integer parser (used in CLI and env errors). */
public final class UnsignedParse {

    private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

    private UnsignedParse() {}

    /** Parses a u64 into a raw 64-bit pattern. */
    public static long u64(String s) {
        return check(s, U64_MAX).longValue();
    }

    public static int u32(String s) {
        return (int) check(s, BigInteger.valueOf(0xFFFF_FFFFL)).longValue();
    }

    private static BigInteger check(String s, BigInteger max) {
        if (s.isEmpty()) {
            throw new NumberFormatException("cannot parse integer from empty string");
        }
        int start = s.charAt(0) == '+' && s.length() > 1 ? 1 : 0;
        for (int i = start; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                throw new NumberFormatException("invalid digit found in string");
            }
        }
        BigInteger v = new BigInteger(s.substring(start));
        if (v.compareTo(max) > 0) {
            throw new NumberFormatException("number too large to fit in target type");
        }
        return v;
    }
}
