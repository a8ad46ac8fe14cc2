package io.kvindexer.indexer.common;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {

    @Test
    void readsEachUnit() {
        assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
        assertThat(Durations.parse("30s")).isEqualTo(Duration.ofSeconds(30));
        assertThat(Durations.parse("10m")).isEqualTo(Duration.ofMinutes(10));
        assertThat(Durations.parse(" 6h ")).isEqualTo(Duration.ofHours(6));
        assertThat(Durations.parse("0")).isZero();
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
