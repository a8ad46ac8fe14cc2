package io.kvindexer.indexer.common;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class QuotedTest {
    @Test
    void aShortValueIsQuotedWhole() {
        String value = "x".repeat(Quoted.MAX);
        assertThat(Quoted.of(value)).isEqualTo(value);
    }

    @Test
    void aLongValueIsCutAtTheLimit() {
        assertThat(Quoted.of("y".repeat(Quoted.MAX + 1))).isEqualTo("y".repeat(Quoted.MAX) + "...");
    }

    /** An emoji across the limit: a cut inside it left a lone high surrogate, encoded to UTF-8 as {@code ?}. */
    @Test
    void aCutNeverSplitsASurrogatePair() {
        String value = "a".repeat(Quoted.MAX - 1) + "\uD83D\uDE00" + "tail";
        String quoted = Quoted.of(value);
        assertThat(quoted).isEqualTo("a".repeat(Quoted.MAX - 1) + "...");
        assertThat(new String(quoted.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8))
                .isEqualTo(quoted);
    }
}
