package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.MatchResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class OverlapScoresTest {

    private static WorkerKey w(long instance, int rank) {
        return new WorkerKey(instance, rank);
    }

    @Test
    void blocksBecomeTokensAndRanksMergeByMax() {
        MatchResult match = new MatchResult(List.of(
                new MatchResult.WorkerMatch(w(5, 0), 2, 3, 4),
                new MatchResult.WorkerMatch(w(5, 1), 3, 3, 3),
                new MatchResult.WorkerMatch(w(6, 0), 0, 1, 1)));

        OverlapScores scores = OverlapScores.of(match, 16);

        assertThat(scores.scores()).isEqualTo(Map.of(5L, Map.of(0, 32L, 1, 48L)));
        assertThat(scores.instances().get(5L))
                .isEqualTo(new OverlapScores.InstanceTiers(64, 48, Map.of(0, 32L, 1, 48L), 48, 64));
        assertThat(scores.instances().get(6L))
                .as("host-only worker: in instances, not in scores")
                .isEqualTo(new OverlapScores.InstanceTiers(16, 0, Map.of(0, 0L), 16, 16));
    }

    @Test
    void mapsAreOrderedUnsigned() {
        MatchResult match = new MatchResult(List.of(
                new MatchResult.WorkerMatch(w(-1L, -1), 1, 1, 1),
                new MatchResult.WorkerMatch(w(-1L, 2), 1, 1, 1),
                new MatchResult.WorkerMatch(w(7, 0), 1, 1, 1),
                new MatchResult.WorkerMatch(w(Long.MIN_VALUE, 0), 1, 1, 1)));

        OverlapScores scores = OverlapScores.of(match, 4);

        assertThat(scores.scores().keySet()).containsExactly(7L, Long.MIN_VALUE, -1L);
        assertThat(scores.instances().keySet()).containsExactly(7L, Long.MIN_VALUE, -1L);
        assertThat(scores.scores().get(-1L).keySet()).containsExactly(2, -1);
        assertThat(scores.instances().get(-1L).dp().keySet()).containsExactly(2, -1);
    }

    @Test
    void emptyMatchGivesEmptyMaps() {
        OverlapScores scores = OverlapScores.of(MatchResult.empty(), 16);
        assertThat(scores.scores()).isEmpty();
        assertThat(scores.instances()).isEmpty();
    }

    @Test
    void largeCountsDoNotOverflow() {
        OverlapScores scores = OverlapScores.of(
                new MatchResult(List.of(new MatchResult.WorkerMatch(w(1, 0), 1 << 20, 1 << 20, 1 << 20))), 1 << 16);
        assertThat(scores.instances().get(1L).disk()).isEqualTo(1L << 36);
    }
}
