package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The exactness rules without sockets (ExactnessRoutesTest has them with real engines): what each report does from
 * each state, that a degradation ends only when every rank cleared (or a restart, or the hold), and that a replay
 * running when it ends shows.
 */
class ExactnessTest {

    private static final Duration LONG = Duration.ofMinutes(1);

    @Test
    void aReplayIsReplayingThenExactAndLeavesADegradationAlone() {
        Exactness x = new Exactness(LONG);
        assertThat(x.read().state()).isEqualTo(ExactnessState.EXACT);
        assertThat(x.exactNow()).isTrue();
        x.replayStarted("replaying batches 3..9");
        assertThat(x.read())
                .extracting(Exactness.Reading::state, Exactness.Reading::reason)
                .containsExactly(ExactnessState.REPLAYING, "replaying batches 3..9");
        assertThat(x.exactNow()).isFalse();
        x.replayEnded();
        assertThat(x.read().state()).isEqualTo(ExactnessState.EXACT);
        assertThat(x.read().reason()).isNull();
        assertThat(x.exactNow()).isTrue();

        x.lost("replay incomplete", Set.of(0));
        x.replayStarted("replaying batches 12..13");
        x.replayEnded();
        assertThat(x.read().state())
                .as("a later complete replay does not bring lost batches back")
                .isEqualTo(ExactnessState.DEGRADED);
        assertThat(x.exactNow()).isFalse();
    }

    @Test
    void aDegradationEndsWhenEveryRankOfTheStreamCleared() {
        Exactness x = new Exactness(LONG);
        x.lost("first loss", Set.of(0, 1));
        Instant since = x.read().since();
        x.lost("second loss", Set.of(0, 1));
        assertThat(x.read().reason()).isEqualTo("second loss");
        assertThat(x.read().since()).as("since when it began").isEqualTo(since);
        x.cleared(1);
        assertThat(x.read().state()).as("rank 0 may still under-report").isEqualTo(ExactnessState.DEGRADED);
        x.cleared(0);
        assertThat(x.read().state()).isEqualTo(ExactnessState.EXACT);
        assertThat(x.exactNow()).isTrue();
        x.cleared(0);
        assertThat(x.read().state())
                .as("a clear of an exact stream changes nothing")
                .isEqualTo(ExactnessState.EXACT);
    }

    @Test
    void aRestartEndsADegradationAndAReplayRunningThenShows() {
        Exactness x = new Exactness(LONG);
        x.lost("lost", Set.of(0));
        x.restarted();
        assertThat(x.read().state()).isEqualTo(ExactnessState.EXACT);

        x.replayStarted("replaying batches 0..4");
        x.lost("replay incomplete: engine buffer starts at 3, requested 0", Set.of(0));
        assertThat(x.read().state()).isEqualTo(ExactnessState.DEGRADED);
        x.cleared(0); // an AllBlocksCleared among the replayed batches: known again, the replay still runs
        assertThat(x.read())
                .extracting(Exactness.Reading::state, Exactness.Reading::reason)
                .containsExactly(ExactnessState.REPLAYING, "replaying batches 0..4");
        x.replayEnded();
        assertThat(x.read().state()).isEqualTo(ExactnessState.EXACT);
    }

    @Test
    void theHoldEndsADegradationCountedFromTheLastLoss() {
        Duration hold = Duration.ofMillis(300);
        Exactness x = new Exactness(hold);
        x.lost("lost", Set.of(0));
        Instant lastLoss = Instant.now();
        assertThat(x.exactNow()).isFalse();
        await().atMost(Duration.ofSeconds(5)).until(x::exactNow);
        Exactness.Reading after = x.read();
        assertThat(after.state()).isEqualTo(ExactnessState.EXACT);
        assertThat(after.since())
                .isBetween(
                        lastLoss.plus(hold).minusMillis(50), lastLoss.plus(hold).plusMillis(50));
        assertThat(new Exactness(Duration.ZERO).exactNow()).isTrue();
    }

    @Test
    void aListenerThatReadsNothingIsDegradedThenReplayingUntilItsStreamShowsWhatItMissed() {
        Exactness x = new Exactness(LONG);
        x.stoppedReading("failed: no such endpoint");
        assertThat(x.read())
                .extracting(Exactness.Reading::state, Exactness.Reading::reason)
                .containsExactly(ExactnessState.DEGRADED, "failed: no such endpoint");
        assertThat(x.exactNow()).isFalse();
        x.replayEnded(); // what the stream reported before it stopped does not end it
        x.cleared(0);
        x.restarted();
        assertThat(x.exactNow()).isFalse();

        x.readingAgain("resumed");
        assertThat(x.read())
                .extracting(Exactness.Reading::state, Exactness.Reading::reason)
                .containsExactly(ExactnessState.REPLAYING, "resumed");
        assertThat(x.exactNow()).isFalse();
        x.replayEnded();
        assertThat(x.read().state()).isEqualTo(ExactnessState.EXACT);
        assertThat(x.exactNow()).isTrue();

        x.lost("lost", Set.of(0));
        x.stoppedReading("paused");
        x.readingAgain("resumed");
        x.replayEnded();
        assertThat(x.read())
                .as("a loss from before the pause keeps its own rules")
                .extracting(Exactness.Reading::state, Exactness.Reading::reason)
                .containsExactly(ExactnessState.DEGRADED, "lost");
        x.cleared(0);
        assertThat(x.exactNow()).isTrue();
    }
}
