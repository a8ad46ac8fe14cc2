package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Runs the tracing bench for about a second so it cannot rot; no timing is asserted. */
class TracingBenchSmokeTest {

    @Test
    void bothIndexersAnswerAndTheSpansReachTheSink() throws Exception {
        TracingBench bench = new TracingBench();
        new CommandLine(bench)
                .parseArgs(
                        "--repetitions",
                        "1",
                        "--clients",
                        "2",
                        "--seconds",
                        "0.4",
                        "--warmup-seconds",
                        "0.1",
                        "--slices",
                        "2",
                        "--tokens",
                        "64");

        List<TracingBench.Rep> reps = bench.runBench();

        assertThat(reps).singleElement().satisfies(rep -> {
            for (ClosedLoop.Load load : List.of(rep.off(), rep.on())) {
                assertThat(load.errors()).isZero();
                assertThat(load.requests()).isPositive();
            }
            assertThat(rep.batches()).isPositive();
            assertThat(rep.spansBytes()).isPositive();
        });
    }
}
