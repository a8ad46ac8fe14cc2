package io.kvindexer.indexer.common;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one spelling of a memory size on the command line: bytes ({@code 67108864}), a whole number with a binary
 * unit ({@code 512k}, {@code 256m}, {@code 2g}: KiB, MiB, GiB), or a share of the heap ({@code 12.5%} of the JVM's
 * maximum heap, what {@code -Xmx} sets), so one setting fits pods of any size.
 */
public final class ByteSizes {

    private static final Pattern FORM = Pattern.compile("(\\d{1,15})([kmg]?)");
    private static final Pattern PERCENT = Pattern.compile("(\\d{1,3}(?:\\.\\d{1,3})?)%");

    private ByteSizes() {}

    /**
     * The bytes {@code text} spells, a percentage taken of {@code heapBytes}; {@link IllegalArgumentException}
     * naming the text and the forms otherwise (also for 0 bytes, or a percentage outside (0, 100]).
     */
    public static long parse(String text, long heapBytes) {
        String t = text == null ? "" : text.strip().toLowerCase(Locale.ROOT);
        Matcher p = PERCENT.matcher(t);
        if (p.matches()) {
            BigDecimal percent = new BigDecimal(p.group(1));
            if (percent.signum() <= 0 || percent.compareTo(BigDecimal.valueOf(100)) > 0) {
                throw new IllegalArgumentException("'" + text + "': a share of the heap is above 0% and at most 100%");
            }
            return Math.max(
                    1,
                    percent.multiply(BigDecimal.valueOf(heapBytes))
                            .divide(BigDecimal.valueOf(100))
                            .longValue());
        }
        Matcher m = FORM.matcher(t);
        if (!m.matches()) {
            throw new IllegalArgumentException("'" + text + "' is not a size: write bytes, or a whole number with k, m"
                    + " or g (KiB, MiB, GiB), e.g. 256m, or a share of the heap, e.g. 12.5%");
        }
        long n = Long.parseLong(m.group(1));
        int shift = switch (m.group(2)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            default -> 0;
        };
        if (n == 0) {
            throw new IllegalArgumentException("'" + text + "': the size must be above 0");
        }
        if (n > Long.MAX_VALUE >> shift) {
            throw new IllegalArgumentException("'" + text + "' is too large");
        }
        return n << shift;
    }
}
