package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the long-prompt harness on a short prompt for about a second so it cannot rot; no timing is asserted. The
 * bench itself fails unless the lookup names every worker and every {@code /query_by_hash} succeeds.
 */
class LongPromptBenchSmokeTest {

    @Test
    void bothTargetsAnswerAndTheSummaryHasItsRatios(@TempDir Path dir) throws Exception {
        JsonNode out = BenchSmoke.runForJson(
                new LongPromptBench(),
                dir,
                "--tokens",
                "6400",
                "--workers",
                "4",
                "--lookups",
                "20",
                "--seconds",
                "0.4",
                "--warmup-seconds",
                "0.1",
                "--slices",
                "2",
                "--repetitions",
                "1");
        assertThat(out.path("workers").asInt()).isEqualTo(4);
        assertThat(out.path("query_by_hash_over_noop_p50").asDouble()).isPositive();
        assertThat(out.path("query_by_hash_over_noop_cpu").asDouble()).isPositive();
        JsonNode rep = out.path("reps").get(0);
        assertThat(rep.path("byHash").path("requests").asLong()).isPositive();
        assertThat(rep.path("noop").path("requests").asLong()).isPositive();
        assertThat(rep.path("byHash").path("errors").asLong()).isZero();
    }
}
