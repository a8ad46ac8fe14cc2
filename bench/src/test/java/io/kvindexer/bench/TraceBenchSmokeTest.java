package io.kvindexer.bench;

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
        Path png = dir.resolve("sweep.png");
        JsonNode root = runWithJson(
                dir,
                BenchSmoke.oneRun(
                        400,
                        4,
                        600,
                        "--threads",
                        "1",
                        "--sweep",
                        "2",
                        "--sweep-max-ms",
                        "200",
                        "--sweep-min-ms",
                        "50",
                        "--warmup",
                        "0",
                        "--plot",
                        png.toString()));

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
        // --warmup 0: no untimed run, however busy the compilers are
        assertThat(root.get("config").get("warmup_runs").asInt()).isZero();
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img.getWidth()).isPositive();
    }

    @Test
    void thePrehashedModeWithTwoIssuersEndsWithTheSameIndex() throws Exception {
        TraceBench bench = new TraceBench();
        new CommandLine(bench).parseArgs(prehashedSlice("--threads", "2", "--issuers", "2"));

        TraceBench.Report report = bench.runBench();

        TraceBench.Point p = report.headline();
        assertThat(p.median().memberships())
                .isEqualTo(report.workload().expectedMemberships())
                .isPositive();
        assertThat(p.reps()).hasSize(1);
        assertThat(p.median().achieved()).isPositive();
        assertThat(p.median().floor()).isPositive();
    }

    @Test
    void theWorkerSweepReportsLookupsAndTheProbeFloorPerWorkerCount(@TempDir Path dir) throws Exception {
        Path png = dir.resolve("workers.png");
        JsonNode root = runWithJson(
                dir, prehashedSlice("--threads", "1", "--workers-sweep", "2,6", "--workers-plot", png.toString()));

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
            assertThat(p.get("paced_floor_p50_us").asDouble()).isPositive();
            assertThat(p.get("paced_floor_p99_us").asDouble())
                    .isGreaterThanOrEqualTo(p.get("paced_floor_p50_us").asDouble());
            assertThat(p.get("idle_lookup_p50_us").asDouble()).isPositive();
            assertThat(p.get("memberships").asLong()).isPositive();
            assertThat(p.get("warmup_runs").asInt())
                    .as("--warmup 0: no untimed run")
                    .isZero();
            assertThat(p.get("jit_compiling_ms_measured").asLong()).isNotNegative();
        }
        assertThat(ImageIO.read(png.toFile()).getWidth()).isPositive();
    }

    /** Runs the bench from its command line with {@code --json} into {@code dir}; returns what it wrote. */
    private static JsonNode runWithJson(Path dir, String... args) throws java.io.IOException {
        Path json = dir.resolve("out.json");
        int exit = new CommandLine(new TraceBench()).execute(BenchSmoke.concat(args, "--json", json.toString()));
        assertThat(exit).isZero();
        return new ObjectMapper().readTree(json.toFile());
    }

    /** 300 requests over 3 engines of 500 blocks, prehashed, in a 100 ms window, one repetition without warm-up. */
    private static String[] prehashedSlice(String... more) {
        return BenchSmoke.concat(
                BenchSmoke.oneRun(300, 3, 500, "--prehashed", "--window-ms", "100", "--warmup", "0"), more);
    }
}
