package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Runs the ZeroMQ ingest harness briefly on a trace slice so it cannot rot; no timing is asserted. */
class ZmqIngestBenchSmokeTest {

    @Test
    void everyPublishedEventBecomesVisibleAndIsCounted() throws Exception {
        ZmqIngestBench bench = new ZmqIngestBench();
        new CommandLine(bench).parseArgs(BenchSmoke.oneRun(150, 2, 400, "--warmup", "0", "--probe-every-ms", "5"));
        Workload expected = bench.workload.build();

        List<ZmqIngestBench.Rep> reps = bench.runBench();

        assertThat(reps).hasSize(1);
        ZmqIngestBench.Rep rep = reps.get(0);
        assertThat(rep.blockEvents())
                .isEqualTo(expected.storedBlocks() + expected.removedBlocks())
                .isPositive();
        assertThat(rep.batches()).isPositive();
        assertThat(rep.blockEventsPerSecond()).isPositive();
        assertThat(rep.probes()).isPositive();
        assertThat(rep.lagP99Ms()).isGreaterThanOrEqualTo(rep.lagP50Ms()).isPositive();
        assertThat(rep.floorBlockEventsPerSecond()).as("the same-run floor ran").isPositive();
    }
}
