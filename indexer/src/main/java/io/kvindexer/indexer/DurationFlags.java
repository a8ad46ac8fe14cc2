package io.kvindexer.indexer;

import io.kvindexer.indexer.common.Durations;
import java.time.Duration;

/** The duration flags' one parse, shared by the option mixins: {@link Durations#parse}, errors naming the flag. */
final class DurationFlags {

    private DurationFlags() {}

    /** {@code text} as a duration, e.g. {@code 500ms}, {@code 30s}, {@code 10m}; else "invalid value for FLAG: why". */
    static Duration parse(String flag, String text) throws ConfigException {
        try {
            return Durations.parse(text);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("invalid value for " + flag + ": " + e.getMessage());
        }
    }

    /** As {@link #parse(String, String)}, and at most {@code max}; else "invalid value for FLAG: ... at most MAX". */
    static Duration parse(String flag, String text, Duration max) throws ConfigException {
        Duration d = parse(flag, text);
        if (d.compareTo(max) > 0) {
            throw new ConfigException("invalid value for " + flag + ": '" + text.strip() + "' is too large: at most "
                    + Durations.format(max));
        }
        return d;
    }
}
