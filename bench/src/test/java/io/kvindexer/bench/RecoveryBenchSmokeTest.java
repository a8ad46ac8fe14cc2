package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Runs the peer-recovery harness on a trace slice so it cannot rot; no timing is asserted. */
class RecoveryBenchSmokeTest {

    @Test
    void aFreshReplicaRecoversEveryMembership() throws Exception {
        RecoveryBench bench = slice();
        Workload expected = bench.workload.build();

        List<RecoveryBench.Rep> reps = bench.runBench();

        assertThat(reps).hasSize(1);
        // the bench itself fails unless the replica holds exactly what the source holds; markers come on top
        assertThat(reps.get(0).memberships())
                .isGreaterThanOrEqualTo(expected.expectedMemberships())
                .isPositive();
        assertThat(reps.get(0).dumpBytes()).isPositive();
        assertThat(reps.get(0).recoverySeconds()).isPositive();
    }

    @Test
    void bothFormatsRecoverEveryMembershipAndJsonIsTheLargerDump() throws Exception {
        List<RecoveryBench.Rep> byFormat = new java.util.ArrayList<>();
        long expected = 0;
        for (String format : List.of("binary", "json")) {
            RecoveryBench bench = slice("--format", format);
            expected = bench.workload.build().expectedMemberships();
            byFormat.add(bench.runBench().get(0)); // fails unless the replica holds exactly what the source holds
        }
        // each run fills its own source (the final markers may differ by a block): compare per membership
        for (RecoveryBench.Rep rep : byFormat) {
            assertThat(rep.memberships()).isGreaterThanOrEqualTo(expected).isPositive();
        }
        double binaryPerMembership =
                byFormat.get(0).dumpBytes() / (double) byFormat.get(0).memberships();
        double jsonPerMembership =
                byFormat.get(1).dumpBytes() / (double) byFormat.get(1).memberships();
        assertThat(jsonPerMembership).as("JSON vs binary bytes per membership").isGreaterThan(5 * binaryPerMembership);
    }

    @Test
    void aReplicaInItsOwnJvmRecoversEveryMembership() throws Exception {
        RecoveryBench bench = slice("--fresh-replica", "--source-warm-dumps", "1");
        Workload expected = bench.workload.build();

        List<RecoveryBench.Rep> reps = bench.runBench(); // fails unless that replica holds what the source holds

        assertThat(reps).hasSize(1);
        assertThat(reps.get(0).memberships()).isGreaterThanOrEqualTo(expected.expectedMemberships());
        // timed from the end of the service's recovery delay, which the replica's process waited out
        assertThat(reps.get(0).recoverySeconds()).isPositive();
        assertThat(reps.get(0).compilerSeconds())
                .as("the replica JVM compiled while it recovered")
                .isPositive();
    }

    /** The bench on 150 requests over 2 engines of 4096 blocks, one repetition. */
    private static RecoveryBench slice(String... more) {
        RecoveryBench bench = new RecoveryBench();
        new CommandLine(bench).parseArgs(BenchSmoke.oneRun(150, 2, 4096, more));
        return bench;
    }
}
