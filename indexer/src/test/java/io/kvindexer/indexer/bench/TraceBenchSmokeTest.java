package io.kvindexer.indexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.image.BufferedImage;
import java.nio.file.Path;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Runs the trace harness for about a second on a slice of the trace so it cannot rot; no timing is asserted. */
class TraceBenchSmokeTest {

    @Test
    void aShortSweepProducesConsistentFiguresJsonAndAPlot(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("out.json");
        Path png = dir.resolve("sweep.png");
        int exit = new CommandLine(new TraceBench())
                .execute(
                        "--trace",
                        BenchSmoke.trace().toString(),
                        "--requests",
                        "400",
                        "--workers",
                        "4",
                        "--engine-blocks",
                        "600",
                        "--threads",
                        "1",
                        "--sweep",
                        "2",
                        "--sweep-max-ms",
                        "200",
                        "--sweep-min-ms",
                        "50",
                        "--repetitions",
                        "1",
                        "--warmup",
                        "0",
                        "--json",
                        json.toString(),
                        "--plot",
                        png.toString());
        assertThat(exit).isZero();

        JsonNode root = new ObjectMapper().readTree(json.toFile());
        JsonNode corpus = root.get("corpus");
        assertThat(corpus.get("queries").asLong()).isEqualTo(400);
        assertThat(corpus.get("block_ops").asLong())
                .isEqualTo(corpus.get("query_blocks").asLong()
                        + corpus.get("stored_blocks").asLong()
                        + corpus.get("removed_blocks").asLong());
        assertThat(corpus.get("removed_blocks").asLong()).isPositive();
        assertThat(root.get("points")).hasSize(2);
        for (JsonNode p : root.get("points")) {
            // the index ends holding exactly what the simulated engines hold
            assertThat(p.get("memberships").asLong())
                    .isEqualTo(corpus.get("expected_memberships").asLong())
                    .isPositive();
            assertThat(p.get("offered_block_ops_per_s").asDouble())
                    .isCloseTo(
                            corpus.get("block_ops").asDouble()
                                    / (p.get("window_ms").asDouble() / 1e3),
                            org.assertj.core.data.Percentage.withPercentage(0.01));
            assertThat(p.get("achieved_block_ops_per_s").asDouble()).isPositive();
            assertThat(p.get("floor_block_ops_per_s").asDouble()).isPositive();
            assertThat(p.get("lookup_p99_us").asDouble())
                    .isGreaterThanOrEqualTo(p.get("lookup_p50_us").asDouble());
            // present and a number; its sign is not asserted: a few thousand memberships are within the GC noise
            // of the other tests sharing this JVM (it once came out at -14.7), and memory figures belong to the
            // benchmark's own runs, not to the test suite
            assertThat(p.get("bytes_per_membership").isNumber()).isTrue();
            assertThat(p.get("bytes_per_membership").asDouble()).isFinite();
        }
        assertThat(root.get("achieved_block_ops_per_s").asDouble()).isPositive();
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img.getWidth()).isPositive();
    }

    @Test
    void thePrehashedModeWithTwoIssuersEndsWithTheSameIndex() throws Exception {
        TraceBench bench = new TraceBench();
        new CommandLine(bench)
                .parseArgs(
                        "--trace",
                        BenchSmoke.trace().toString(),
                        "--requests",
                        "300",
                        "--workers",
                        "3",
                        "--engine-blocks",
                        "500",
                        "--threads",
                        "2",
                        "--issuers",
                        "2",
                        "--prehashed",
                        "--window-ms",
                        "100",
                        "--repetitions",
                        "1",
                        "--warmup",
                        "0");

        TraceBench.Report report = bench.runBench();

        TraceBench.Point p = report.headline();
        assertThat(p.memberships())
                .isEqualTo(report.workload().expectedMemberships())
                .isPositive();
        assertThat(p.reps()).hasSize(1);
        assertThat(p.achieved()).isPositive();
        assertThat(p.floor()).isPositive();
    }

    @Test
    void theWorkerSweepReportsLookupsAndTheProbeFloorPerWorkerCount(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("sweep.json");
        Path png = dir.resolve("workers.png");
        int exit = new CommandLine(new TraceBench())
                .execute(
                        "--trace",
                        BenchSmoke.trace().toString(),
                        "--requests",
                        "300",
                        "--workers",
                        "3",
                        "--engine-blocks",
                        "500",
                        "--threads",
                        "1",
                        "--prehashed",
                        "--window-ms",
                        "100",
                        "--repetitions",
                        "1",
                        "--warmup",
                        "0",
                        "--workers-sweep",
                        "2,6",
                        "--json",
                        json.toString(),
                        "--workers-plot",
                        png.toString());
        assertThat(exit).isZero();

        JsonNode root = new ObjectMapper().readTree(json.toFile());
        assertThat(root.get("achieved_block_ops_per_s").asDouble()).isPositive();
        JsonNode sweep = root.get("sweep");
        assertThat(sweep).hasSize(2);
        assertThat(sweep.get(0).get("workers").asInt()).isEqualTo(2);
        assertThat(sweep.get(1).get("workers").asInt()).isEqualTo(6);
        for (JsonNode p : sweep) {
            assertThat(p.get("lookup_p99_us").asDouble())
                    .isGreaterThanOrEqualTo(p.get("lookup_p50_us").asDouble());
            assertThat(p.get("lookup_p50_us").asDouble()).isPositive();
            assertThat(p.get("probe_floor_p50_us").asDouble()).isPositive();
            assertThat(p.get("memberships").asLong()).isPositive();
        }
        assertThat(ImageIO.read(png.toFile()).getWidth()).isPositive();
    }
}
