package io.kvindexer.operator.reconcile;

import java.util.Arrays;
import java.util.Objects;

/**
 * The field checks of both spec validations ({@code KvIndexerValidation}, {@code KvWorkerValidation}): each returns
 * a message naming the field, or null when the value is acceptable. The messages are what the InvalidSpec condition
 * and Event say.
 */
public final class SpecChecks {
    private SpecChecks() {}

    public static String required(String field, String value) {
        return value == null || value.isBlank() ? field + " is required" : null;
    }

    public static String between(String field, Integer value, int min, int max) {
        return value == null || value < min || value > max
                ? field + " must be between " + min + " and " + max + ", got " + value
                : null;
    }

    public static String zeroOrMore(String field, Integer value) {
        return value == null || value < 0 ? field + " must be 0 or more, got " + value : null;
    }

    public static String atLeastOne(String field, Integer value) {
        return value == null || value < 1 ? field + " must be at least 1, got " + value : null;
    }

    /**
     * A model name or tenant the indexer takes (its {@code Registration.nameProblem}): at most {@code max} characters
     * (code points), no control character; else every replica answers the registration 422.
     */
    public static String indexerName(String field, String value, int max) {
        if (value == null) {
            return null;
        }
        int length = value.codePointCount(0, value.length());
        if (length > max) {
            return field + " must be at most " + max + " characters, got " + length;
        }
        for (int i = 0, at = 0; i < value.length(); at++) {
            int c = value.codePointAt(i);
            if (Character.isISOControl(c)) {
                return String.format(
                        "%s must not contain control characters, got U+%04X at character %d", field, c, at);
            }
            i += Character.charCount(c);
        }
        return null;
    }

    /** The first of {@code problems} that is not null, or null. */
    public static String first(String... problems) {
        return Arrays.stream(problems).filter(Objects::nonNull).findFirst().orElse(null);
    }
}
