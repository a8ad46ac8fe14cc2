package io.kvindexer.indexer.registry;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.ingest.Exactness;
import io.kvindexer.indexer.ingest.ExactnessState;
import io.kvindexer.indexer.ingest.IdleListener;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The board routes an index write that failed with no listener to tell to the listener of that worker rank: the one
 * registered now, the one registered after the failure (recovery's adopt runs before the saved registrations are
 * restored, a reattach before its listener starts), or, for a rank delivered on another rank's stream, every
 * listener of the instance. Other instances and ranks stay exact.
 */
class ExactnessBoardTest {

    private final ExactnessBoard board = new ExactnessBoard();

    @Test
    void aFailureReachesTheListenerOfItsRankOnly() {
        Rank zero = rank(1, 0);
        Rank one = rank(1, 1);
        Rank other = rank(2, 0);
        board.put(1, List.of(zero, one));
        board.put(2, List.of(other));

        board.writeFailed(new WorkerKey(1, 1), "expiry failed");

        assertThat(state(one)).isEqualTo(ExactnessState.DEGRADED);
        assertThat(one.exactness.read().reason()).isEqualTo("expiry failed");
        assertThat(state(zero)).isEqualTo(ExactnessState.EXACT);
        assertThat(board.exact(1)).isFalse();
        assertThat(board.exact(2)).isTrue();
    }

    @Test
    void aFailureBeforeTheRankRegistersDegradesItsListenerOnceItDoes() {
        board.writeFailed(new WorkerKey(1, 0), "adopt failed");
        Rank late = rank(1, 0);
        board.put(1, List.of(late));

        assertThat(state(late)).isEqualTo(ExactnessState.DEGRADED);
        assertThat(board.exact(1)).isFalse();

        // taken: the next listener of that rank (registered anew) starts exact
        Rank again = rank(1, 0);
        board.put(1, List.of(again));
        assertThat(state(again)).isEqualTo(ExactnessState.EXACT);
    }

    @Test
    void aRankWithoutAListenerOfItsOwnDegradesEveryListenerOfItsInstance() {
        Rank zero = rank(1, 0);
        board.put(1, List.of(zero));

        board.writeFailed(new WorkerKey(1, 3), "reattach failed"); // rank 3 arrives on rank 0's stream

        assertThat(state(zero)).isEqualTo(ExactnessState.DEGRADED);
        assertThat(board.exact(1)).isFalse();
    }

    private static ExactnessState state(Rank rank) {
        return rank.exactness.read().state();
    }

    private static Rank rank(long instance, int dpRank) {
        ListenerSpec spec = new ListenerSpec(instance, dpRank, "tcp://127.0.0.1:1", null);
        return new Rank(
                spec,
                new IdleListener(IdleListener.pending(spec).snapshot(), new Exactness(Duration.ofMinutes(1))),
                new SequenceWatermark());
    }
}
