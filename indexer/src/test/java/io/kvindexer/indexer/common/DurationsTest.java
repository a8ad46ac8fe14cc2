package io.kvindexer.indexer.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DurationsTest {

    @ParameterizedTest
    @CsvSource({"500ms, PT0.5S", "30s, PT30S", "10m, PT10M", "' 6h ', PT6H", "0, PT0S"})
    void readsEachUnit(String text, Duration expected) {
        assertThat(Durations.parse(text)).isEqualTo(expected);
    }

    @Test
    void refusesOtherSpellingsNamingTheText() {
        for (String bad : new String[] {"", "5", "1.5s", "-1s", "10 s", "3d", "PT5S", "s"}) {
            assertThatThrownBy(() -> Durations.parse(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "' is not a duration");
        }
    }

    @Test
    void formatReadsBack() {
        for (String s : new String[] {"0", "750ms", "1500ms", "2s", "90s", "5m", "2h"}) {
            assertThat(Durations.format(Durations.parse(s))).isEqualTo(s);
        }
    }
}
