package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Runs the goal 3 comparison briefly with the lean ZMTP publishers (a child JVM, no Python needed) so it cannot rot:
 * every batch reaches the index, nothing is lost; no timing is asserted.
 */
class FleetCompareSmokeTest {

    @Test
    void everyBatchOfEitherSideIsAppliedWithoutGaps() throws Exception {
        FleetCompare compare = new FleetCompare(FleetPublishers.Kind.ZMTP, 4, 4, 16, 64);

        FleetCompare.Result fleet = compare.run(4, 2, 0);
        FleetCompare.Result single = compare.run(1, 1, 20_000);

        assertThat(fleet.applied()).isEqualTo(64);
        assertThat(fleet.blockEventsPerSecond()).isPositive();
        assertThat(fleet.gaps()).isEqualTo("0.0");
        assertThat(single.applied()).as("every paced batch seen applied").isEqualTo(64);
        assertThat(single.lagP99Micros()).isGreaterThanOrEqualTo(single.lagP50Micros());
        assertThat(single.lags())
                .as("every paced batch's lag, for the pooled p99")
                .hasSize(64)
                .isSorted();
        assertThat(single.toWriter())
                .as("every paced batch's stretch before the writer")
                .hasSize(64)
                .isSorted();
        assertThat(single.inWriter())
                .as("and in the writer: a part of its lag (1 ms for the publisher's epoch clock against nanoTime)")
                .hasSize(64)
                .isSorted();
        assertThat(single.inWriter()[63]).isLessThanOrEqualTo(single.lags()[63] + 1_000);
        assertThat(fleet.lags()).isEmpty();
        assertThat(single.heap().allocated())
                .as("the window's allocation is counted")
                .isPositive();
        assertThat(single.gaps()).isEqualTo("0.0");
        assertThat(compare.blockEvents()).isEqualTo(64 * 16);
    }
}
