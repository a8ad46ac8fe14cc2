package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the decode harness on two small points for about a second so it cannot rot; no timing is asserted. The bench
 * itself fails unless the lookups match every block of the sequence.
 */
class DecodeBenchSmokeTest {

    @Test
    void bothFleetsAreTimedAtEveryPoint(@TempDir Path dir) throws Exception {
        JsonNode points = BenchSmoke.runForJson(
                        new DecodeBench(),
                        dir,
                        "--engines",
                        "4",
                        "--requests",
                        "2,8",
                        "--decode",
                        "8",
                        "--lookup-millis",
                        "100",
                        "--repetitions",
                        "1")
                .path("points");
        assertThat(points).hasSize(2);
        assertThat(points.get(1).path("requests_per_engine").asInt()).isEqualTo(8);
        for (JsonNode p : points) {
            assertThat(p.path("decoded_p50_us").asDouble()).isPositive();
            assertThat(p.path("at_once_p50_us").asDouble()).isPositive();
        }
    }
}
