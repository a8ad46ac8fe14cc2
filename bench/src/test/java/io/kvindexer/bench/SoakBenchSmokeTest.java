package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Runs the soak for a few seconds so it cannot rot: an indexer process, two engine stand-ins, a restart and a
 * re-registration in each period, drops and a short TTL. No figure is asserted, only what the bench itself checks.
 */
class SoakBenchSmokeTest {

    @Test
    void aShortSoakEndsExactWithTheTtlTierExpired() throws Exception {
        SoakBench bench = new SoakBench();
        int exit = new CommandLine(bench)
                .execute(
                        "--trace", BenchSmoke.trace().toString(),
                        "--minutes", "0.05",
                        "--report-every", "1500ms",
                        "--engines", "2",
                        "--rate", "60",
                        "--engine-blocks", "256",
                        "--ttl", "1s",
                        "--drop-percent", "5",
                        "--heap", "256m");

        assertThat(exit)
                .as("the bench exits 0 only when the final /dump is exact")
                .isZero();
        assertThat(bench.exact).isTrue();
        assertThat(bench.checks).hasSizeGreaterThanOrEqualTo(3);
        assertThat(bench.checks).allSatisfy(c -> assertThat(c.difference()).isNull());
        assertThat(bench.checks.getLast().replaysOk())
                .as("dropped batches were replayed")
                .isPositive();
        assertThat(bench.checks.getLast().expiredTtl())
                .as("the TTL tier expired")
                .isPositive();
        assertThat(bench.heapOverFresh).isPositive();
    }
}
