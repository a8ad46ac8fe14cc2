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
}
