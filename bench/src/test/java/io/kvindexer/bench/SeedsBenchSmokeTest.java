package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the seeds harness on two small fleets for about a second so it cannot rot; no timing is asserted. The bench
 * itself fails unless both lookups name every engine.
 */
class SeedsBenchSmokeTest {

    @Test
    void bothFleetsAreTimedAtEverySize(@TempDir Path dir) throws Exception {
        JsonNode points = BenchSmoke.runForJson(
                        new SeedsBench(),
                        dir,
                        "--engines",
                        "4,40",
                        "--blocks",
                        "24",
                        "--prefill",
                        "8",
                        "--lookup-millis",
                        "100",
                        "--repetitions",
                        "1")
                .path("points");
        assertThat(points).hasSize(2);
        assertThat(points.get(1).path("engines").asInt()).isEqualTo(40);
        for (JsonNode p : points) {
            assertThat(p.path("own_seed_p50_us").asDouble()).isPositive();
            assertThat(p.path("shared_seed_p50_us").asDouble()).isPositive();
        }
    }
}
