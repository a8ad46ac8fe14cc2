package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Runs the snapshot harness on a trace slice so it cannot rot; no timing is asserted. */
class SnapshotBenchSmokeTest {

    @Test
    void aReplicaStartsFromTheSnapshotAndCatchesUpByReplay() throws Exception {
        SnapshotBench bench = new SnapshotBench();
        new CommandLine(bench).parseArgs(BenchSmoke.oneRun(150, 2, 4096, "--replay-batches", "200"));
        Workload expected = bench.workload.build();

        List<SnapshotBench.Rep> reps = bench.runBench(); // fails unless the replica catches up with the source

        assertThat(reps).hasSize(1);
        SnapshotBench.Rep rep = reps.getFirst();
        assertThat(rep.memberships()).isGreaterThanOrEqualTo(expected.expectedMemberships());
        assertThat(rep.snapshotBytes()).isPositive();
        assertThat(rep.readySeconds()).isPositive();
        assertThat(rep.caughtUpSeconds()).isGreaterThanOrEqualTo(rep.readyWithReplaySeconds());
    }
}
