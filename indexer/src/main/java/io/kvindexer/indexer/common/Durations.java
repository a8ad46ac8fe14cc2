package io.kvindexer.indexer.common;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one spelling of a duration on the command line and in JSON config: a whole number and a unit, {@code 500ms},
 * {@code 30s}, {@code 10m}, {@code 6h} ({@code 0} alone also means zero). Go's and Kubernetes' short form, which
 * operators already write in their manifests.
 */
public final class Durations {

    private static final Pattern FORM = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

    private Durations() {}

    /** The duration {@code text} spells; {@link IllegalArgumentException} naming the text and the form otherwise. */
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
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
        };
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
