package io.kvindexer.indexer.common;

import java.math.BigInteger;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one spelling of a duration on the command line and in JSON config: a whole number and a unit, {@code 500ms},
 * {@code 30s}, {@code 10m}, {@code 6h} ({@code 0} alone also means zero). Go's and Kubernetes' short form, which
 * operators already write in their manifests. At most {@link Long#MAX_VALUE} nanoseconds (about 292 years): the
 * users of a duration count it in nanoseconds ({@link Duration#toNanos}), which fails beyond that.
 */
public final class Durations {

    private static final Pattern FORM = Pattern.compile("(\\d+)(ms|s|m|h)");

    private Durations() {}

    /**
     * The duration {@code text} spells; {@link IllegalArgumentException} naming the text and the form otherwise, or
     * saying it is too large and what the largest value in its unit is.
     */
    public static Duration parse(String text) {
        String t = text == null ? "" : text.strip();
        if (t.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = FORM.matcher(t);
        if (!m.matches()) {
            throw new IllegalArgumentException(
                    "'" + text + "' is not a duration: write a whole number and a unit, e.g. 500ms, 30s, 10m, 6h");
        }
        String unit = m.group(2);
        long nanosPerUnit = switch (unit) {
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m" -> 60_000_000_000L;
            default -> 3_600_000_000_000L;
        };
        long max = Long.MAX_VALUE / nanosPerUnit;
        BigInteger n = new BigInteger(m.group(1)); // any number of digits: a long would fail before the check
        if (n.compareTo(BigInteger.valueOf(max)) > 0) {
            throw new IllegalArgumentException(
                    "'" + text + "' is too large: at most " + max + unit + " (about 292 years)");
        }
        return Duration.ofNanos(n.longValueExact() * nanosPerUnit);
    }

    /** The shortest exact spelling of {@code d} that {@link #parse} reads back. */
    public static String format(Duration d) {
        long ms = d.toMillis();
        if (ms == 0) {
            return "0";
        }
        if (ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }
}
