package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkloadTest {

    static final Path TRACE = BenchSmoke.trace();

    @Test
    void loadsTimestampOrDelayAndAppliesTransforms(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("t.jsonl");
        Files.writeString(file, """
                {"delay": 5, "hash_ids": [0, 1], "output_length": 7}
                {"delay": 10, "hash_ids": [0, 2], "osl": 3}

                {"timestamp": 40, "hash_ids": [3], "output_length": 1}
                """);
        MooncakeTrace t = MooncakeTrace.load(file, 0);
        assertThat(t.requests()).extracting(MooncakeTrace.Request::timestampMs).containsExactly(5L, 15L, 40L);
        assertThat(t.requests()).extracting(MooncakeTrace.Request::outputLength).containsExactly(7, 3, 1);
        assertThat(t.maxId()).isEqualTo(3);

        MooncakeTrace longer = t.lengthFactor(2);
        assertThat(longer.requests().get(1).hashIds()).containsExactly(0, 1, 4, 5);
        MooncakeTrace dup = longer.dupFactor(3);
        assertThat(dup.requests()).hasSize(9);
        // stride = maxId + 1 = 8: copy d adds 8 * d
        assertThat(dup.requests().get(2).hashIds()).containsExactly(16, 17, 18, 19);
        assertThat(dup.blockRefs()).isEqualTo(3 * longer.blockRefs());
    }

    @Test
    void rejectsALineWithoutTime(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("bad.jsonl");
        Files.writeString(file, "{\"hash_ids\": [1]}\n");
        assertThatThrownBy(() -> MooncakeTrace.load(file, 0)).hasMessageContaining("timestamp");
    }

    @Test
    void lruEngineStoresWithParentsEvictsTailsFirstAndNeverOrphansAStore() {
        MooncakeTrace trace = new MooncakeTrace(List.of(
                new MooncakeTrace.Request(0, new long[] {0, 1}, 0),
                new MooncakeTrace.Request(1, new long[] {0, 1, 2}, 0),
                new MooncakeTrace.Request(2, new long[] {0, 3}, 0)));
        // one worker, 2 engine blocks per trace block, room for 6 engine blocks
        Workload w = Workload.build(trace, new Workload.Spec(2, 1, 1, 6, 42));
        List<Workload.Op> ops = Arrays.asList(w.ops());
        assertThat(ops)
                .extracting(Workload.Op::kind)
                .containsExactly(
                        Workload.Kind.QUERY,
                        Workload.Kind.STORED,
                        Workload.Kind.QUERY,
                        Workload.Kind.STORED,
                        Workload.Kind.QUERY,
                        Workload.Kind.REMOVED,
                        Workload.Kind.STORED);
        assertThat(ops.get(1).hasParent()).isFalse();
        assertThat(ops.get(1).tokenValues()).containsExactly(0, 0, 1, 1);
        Workload.Op extend = ops.get(3);
        assertThat(extend.hasParent()).isTrue();
        assertThat(extend.parent()).isEqualTo(ops.get(1).seqHashes()[3]);
        assertThat(extend.tokenValues()).containsExactly(2, 2);
        // the pool is full; the third request needs 2 new blocks and evicts the tail of [0 0 1 1 2 2], not its head
        Workload.Op removed = ops.get(5);
        assertThat(removed.seqHashes()).containsExactly(extend.seqHashes()[1], extend.seqHashes()[0]);
        assertThat(ops.get(6).parent()).isEqualTo(ops.get(1).seqHashes()[1]);
        assertThat(ops.get(6).tokenValues()).containsExactly(3, 3);
        assertThat(w.blockOps()).isEqualTo(4 + 4 + 6 + 2 + 4 + 2 + 2);
        assertThat(w.expectedMemberships()).isEqualTo(6);
        assertThat(Floor.run(w).members()).isEqualTo(6);
    }

    @Test
    void theConversationTraceExpandsIntoAConsistentWorkload() throws Exception {
        MooncakeTrace trace = MooncakeTrace.load(TRACE, 500);
        Workload w = Workload.build(trace, new Workload.Spec(512, 128, 8, 1024, 42));
        assertThat(w.queries()).isEqualTo(500);
        assertThat(w.queryBlocks()).isEqualTo(trace.blockRefs() * 4);
        assertThat(w.removedBlocks()).isPositive();
        // every op's blocks counted once; the floor ends with exactly the engines' memberships
        assertThat(Arrays.stream(w.ops()).mapToLong(Workload.Op::blocks).sum()).isEqualTo(w.blockOps());
        assertThat(w.storedBlocks() - w.removedBlocks()).isEqualTo(w.expectedMemberships());
        assertThat(Floor.run(w).members()).isEqualTo(w.expectedMemberships());
        // queries go first at equal times, and time never goes backwards
        for (int i = 1; i < w.ops().length; i++) {
            Workload.Op a = w.ops()[i - 1];
            Workload.Op b = w.ops()[i];
            assertThat(b.timeMs()).isGreaterThanOrEqualTo(a.timeMs());
            if (a.timeMs() == b.timeMs() && b.kind() == Workload.Kind.QUERY) {
                assertThat(a.kind()).isEqualTo(Workload.Kind.QUERY);
            }
        }
        long[] deadlines = w.deadlines(100);
        assertThat(deadlines[deadlines.length - 1]).isEqualTo(100_000_000L);
    }
}
