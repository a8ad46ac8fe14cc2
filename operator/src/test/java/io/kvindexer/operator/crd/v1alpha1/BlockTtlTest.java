package io.kvindexer.operator.crd.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.common.Durations;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * spec.blockTtl's schema pattern against the indexer's own reading of --block-ttl ({@link Durations}): whatever the
 * pattern takes, the indexer takes, else a valid KvIndexer would give replicas that stop at their start.
 */
class BlockTtlTest {

    @Test
    void whatThePatternTakesTheIndexerTakes() {
        for (String unit : List.of("ms", "s", "m", "h")) {
            // the pattern bounds the number of digits: the largest number of each length stands for all of them
            for (int digits = 1; digits <= 20; digits++) {
                String ttl = "9".repeat(digits) + unit;
                if (ttl.matches(BlockTtl.DURATION)) {
                    assertThatCode(() -> Durations.parse(ttl)).as(ttl).doesNotThrowAnyException();
                }
            }
        }
    }

    @Test
    void whatTheIndexerRefusesAsTooLargeThePatternRefuses() {
        for (String tooLarge : List.of("2562048h", "153722868m", "9223372037s", "9223372036855ms", "999999999999h")) {
            assertThatThrownBy(() -> Durations.parse(tooLarge)).as(tooLarge).hasMessageContaining("too large");
            assertThat(tooLarge).as(tooLarge).doesNotMatch(BlockTtl.DURATION);
            assertThat(new BlockTtl(tooLarge, null, null, null).problem()).contains("got " + tooLarge);
        }
        // and at least 31 years in every unit is still taken
        for (String large : List.of("999999999999ms", "999999999s", "99999999m", "999999h")) {
            assertThat(large).matches(BlockTtl.DURATION);
            assertThat(Durations.parse(large)).isGreaterThan(java.time.Duration.ofDays(31 * 365));
        }
    }
}
