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

    /** A number that does not fit in nanoseconds (what the users of a duration count in) is too large, not misspelt. */
    @ParameterizedTest
    @CsvSource({
        "9999999999999999h, 2562047h",
        "99999999999h, 2562047h",
        "2562048h, 2562047h",
        "153722868m, 153722867m",
        "9223372037s, 9223372036s",
        "9223372036854775807ms, 9223372036854ms",
        "99999999999999999999999999ms, 9223372036854ms"
    })
    void refusesWhatDoesNotFitNamingTheMaximum(String text, String max) {
        assertThatThrownBy(() -> Durations.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("'" + text + "' is too large: at most " + max + " (about 292 years)");
        assertThat(Durations.parse(max).toNanos()).isLessThanOrEqualTo(Long.MAX_VALUE);
        assertThat(Durations.parse(max)).isGreaterThan(Duration.ofDays(106_751));
    }

    @Test
    void formatReadsBack() {
        for (String s : new String[] {"0", "750ms", "1500ms", "2s", "90s", "5m", "2h"}) {
            assertThat(Durations.format(Durations.parse(s))).isEqualTo(s);
        }
    }
}
