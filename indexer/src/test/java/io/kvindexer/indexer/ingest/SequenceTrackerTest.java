package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Every sequence rule of {@link SequenceTracker}, without sockets. */
class SequenceTrackerTest {

    private final SequenceWatermark watermark = new SequenceWatermark();
    private final SequenceTracker tracker = new SequenceTracker(watermark);

    private SequenceTracker.Step live(long seq) {
        return tracker.onLive(seq);
    }

    /** Batch {@code seq} decoded and applied, as the listener tells it (a payload of its own, no wall-clock stamp). */
    private void applied(long seq) {
        tracker.applied(seq, new byte[] {(byte) seq, (byte) (seq >>> 8)}, 0);
    }

    /** Handles each live seq in turn the way the listener does, with every replay filling its range. */
    private void liveAndApply(long... seqs) {
        for (long seq : seqs) {
            SequenceTracker.Step step = live(seq);
            for (long s = step.replayFrom(); s != step.replayUntil(); s++) {
                if (tracker.isNew(s)) {
                    applied(s);
                }
            }
            if (tracker.isNew(seq)) {
                applied(seq);
            }
        }
    }

    @Test
    void firstSeqZeroIsAppliedWithoutReplay() {
        SequenceTracker.Step step = live(0);
        assertThat(step).isEqualTo(new SequenceTracker.Step(false, 0, 0, SequenceTracker.Why.JOIN));
        assertThat(step.needsReplay()).isFalse();
        assertThat(tracker.isNew(0)).isTrue();
    }

    @Test
    void slowJoinerReplaysFromZero() {
        SequenceTracker.Step step = live(4);
        assertThat(step.restarted()).isFalse();
        assertThat(step.needsReplay()).isTrue();
        assertThat(step.replayFrom()).isZero();
        assertThat(step.replayUntil()).isEqualTo(4);
        assertThat(step.missing()).isEqualTo(4);
    }

    @Test
    void contiguousSeqsNeedNothing() {
        liveAndApply(0);
        assertThat(live(1)).as("no replay, no restart").isEqualTo(new SequenceTracker.Step(false, 1, 1));
        assertThat(tracker.isNew(1)).isTrue();
    }

    @Test
    void aGapReplaysFromWatermarkPlusOne() {
        liveAndApply(0, 1);
        assertThat(live(5)).isEqualTo(new SequenceTracker.Step(false, 2, 5));
    }

    @Test
    void aSeqAlreadyAppliedByAReplayIsStale() {
        liveAndApply(0);
        SequenceTracker.Step step = live(3);
        assertThat(step.replayFrom()).isEqualTo(1);
        // the replay returned 1..4 (the engine sends everything from the start, live seqs included)
        for (long s = 1; s <= 4; s++) {
            applied(s);
        }
        assertThat(tracker.isNew(3)).isFalse();
        assertThat(live(4).needsReplay()).isFalse();
        assertThat(tracker.isNew(4)).isFalse();
        assertThat(tracker.isNew(5)).isTrue();
    }

    @Test
    void aDuplicateOfTheWatermarkOnAFreshAttemptIsSkippedNotARestart() {
        watermark.set(4); // applied by an earlier registration
        SequenceTracker.Step step = live(4);
        assertThat(step.restarted()).isFalse();
        assertThat(step.needsReplay()).isFalse();
        assertThat(tracker.isNew(4)).isFalse();
        assertThat(watermark.get()).isEqualTo(4);
    }

    @Test
    void aFreshAttemptBelowTheWatermarkIsARestartAndReplaysFromZero() {
        watermark.set(3);
        SequenceTracker.Step step = live(1);
        assertThat(step.restarted()).isTrue();
        assertThat(watermark.get()).isEqualTo(SequenceWatermark.UNSET);
        assertThat(step.replayFrom()).isZero();
        assertThat(step.replayUntil()).isEqualTo(1);
    }

    @Test
    void aFreshAttemptAboveTheWatermarkReplaysTheMissedSeqs() {
        watermark.set(3);
        assertThat(live(6)).isEqualTo(new SequenceTracker.Step(false, 4, 6));
    }

    @Test
    void aLiveSeqNotAboveThePreviousLiveOneIsARestart() {
        liveAndApply(0, 1, 2);
        SequenceTracker.Step step = live(0); // a new engine process starts at 0 again
        assertThat(step.restarted()).isTrue();
        assertThat(step.needsReplay()).isFalse();
        assertThat(tracker.isNew(0)).isTrue();
    }

    @Test
    void aRepeatedLiveSeqIsARestartToo() {
        liveAndApply(0, 1);
        assertThat(live(1)).as("restarted, replays from 0").isEqualTo(new SequenceTracker.Step(true, 0, 1));
    }

    @Test
    void afterARestartAReplayFoundLiveSeqsThatContinueTheOldOnesAreUnprovenUntilOneGoesBack() {
        liveAndApply(0, 1, 2, 3);
        tracker.restarted(); // a replay's answer: another process; its batches 0..1 are then replayed
        applied(0);
        applied(1);
        assertThat(live(4))
                .as("the old process's next seq, maybe still queued: not applied, not a gap")
                .isEqualTo(new SequenceTracker.Step(false, 4, 4, SequenceTracker.Why.UNPROVEN));
        assertThat(live(5).why()).isEqualTo(SequenceTracker.Why.UNPROVEN);
        SequenceTracker.Step back = live(0);
        assertThat(back.restarted())
                .as("the new process's stream begins: its restart was handled")
                .isFalse();
        assertThat(back.needsReplay()).isFalse();
        assertThat(tracker.isNew(0)).as("replayed already").isFalse();
        assertThat(live(3)).as("measured against the new process now").isEqualTo(new SequenceTracker.Step(false, 2, 3));
    }

    /**
     * The seq that goes back after a restart a replay found is the new process's stream only if the replay did not
     * apply past a later process's start: stamped more than the margin after the watermark's batch, it is a restart
     * in place since (RandomFaultTest, seed 4), not a late copy of a replayed batch.
     */
    @Test
    void aSeqThatGoesBackAfterARestartAReplayFoundIsARestartAgainWhenStampedAfterTheWatermark() {
        assertThat(afterARestartAReplayFound(new SequenceTracker(new SequenceWatermark()))
                        .onLive(1, STAMPED + 0.001))
                .as("a late copy of a replayed batch, stamped no later than the watermark's")
                .isEqualTo(new SequenceTracker.Step(false, 1, 1, SequenceTracker.Why.GAP));
        assertThat(afterARestartAReplayFound(tracker).onLive(0, STAMPED + 2))
                .as("stamped two seconds after the watermark's batch: the engine restarted again")
                .isEqualTo(new SequenceTracker.Step(true, 0, 0, SequenceTracker.Why.WENT_BACK));
        assertThat(tracker.isNew(0)).isTrue();
    }

    /** Live seqs 0..5 applied, then a replay found another process and applied its 0..2. */
    private static SequenceTracker afterARestartAReplayFound(SequenceTracker t) {
        for (long s = 0; s < 6; s++) {
            t.onLive(s);
            t.applied(s, new byte[] {(byte) s}, 0);
        }
        t.restarted();
        for (long s = 0; s < 3; s++) {
            t.applied(s, new byte[] {(byte) (10 + s)}, STAMPED + s * 0.001);
        }
        return t;
    }

    @Test
    void anUnprovenLiveSeqIsVouchedForByTheEnginesCopyOfItsBytes() {
        liveAndApply(0, 1);
        tracker.restarted();
        assertThat(live(7).why()).isEqualTo(SequenceTracker.Why.UNPROVEN);
        tracker.unvouched(7, new byte[] {7});
        tracker.vouched(7, new byte[] {8}); // another batch at that seq: the old process's was live
        assertThat(tracker.liveUnproven()).isTrue();
        tracker.vouched(7, new byte[] {7}); // the engine buffered those bytes: the live stream is its own
        assertThat(tracker.liveUnproven()).isFalse();
        assertThat(live(8).why()).isEqualTo(SequenceTracker.Why.JOIN);
    }

    @Test
    void aRestartAReplayFoundBeforeAnyLiveMessageLeavesNothingUnproven() {
        watermark.set(4);
        tracker.begin();
        tracker.restarted(); // a catch-up on connect: this socket delivered nothing of the old process
        assertThat(tracker.liveUnproven()).isFalse();
        assertThat(live(9)).isEqualTo(new SequenceTracker.Step(false, 0, 9, SequenceTracker.Why.JOIN));
    }

    @Test
    void aRestartWithoutAnythingAppliedIsNoRestart() {
        SequenceTracker.Step first = live(5);
        // nothing applied (the replay failed): the watermark is unset, so 3 is not compared with anything
        SequenceTracker.Step second = live(3);
        assertThat(first.restarted()).isFalse();
        assertThat(second.restarted()).isFalse();
        assertThat(second.replayUntil()).isEqualTo(3);
    }

    @Test
    void theWatermarkAdvancesOnlyWhenABatchIsApplied() {
        live(0);
        assertThat(tracker.anyApplied()).isFalse();
        assertThat(watermark.get()).isEqualTo(SequenceWatermark.UNSET);
        applied(0);
        assertThat(tracker.anyApplied()).isTrue();
        assertThat(watermark.get()).isZero();
        live(1); // not decodable, say: not applied
        assertThat(watermark.get()).isZero();
        assertThat(live(2)).isEqualTo(new SequenceTracker.Step(false, 1, 2));
    }

    @Test
    void seqsAreUnsigned() {
        long high = 0x8000_0000_0000_0000L; // 2^63: negative as a signed long
        watermark.set(high);
        SequenceTracker.Step step = live(high + 2);
        assertThat(step.restarted()).isFalse();
        assertThat(step.replayFrom()).isEqualTo(high + 1);
        assertThat(tracker.isNew(high + 2)).isTrue();
        assertThat(tracker.isNew(5)).isFalse();
    }

    @Test
    void aGapOverOnlyUndecodableSeqsLostNothingNew() {
        liveAndApply(0);
        live(1);
        tracker.undecodable(1);
        assertThat(tracker.onlyUndecodable(1, 2)).isTrue();
        assertThat(tracker.onlyUndecodable(1, 3)).as("seq 2 never arrived").isFalse();
        assertThat(tracker.onlyUndecodable(0, 2))
                .as("seq 0 was applied, not undecodable")
                .isFalse();
    }

    @Test
    void aRangeSettledBelowALiveSeqMakesItContiguousAndNeverMovesTheWatermarkBack() {
        tracker.begin();
        tracker.settled(50); // a join that reported [0, 50) lost, bounded by live seq 50
        assertThat(watermark.get()).isEqualTo(49);
        assertThat(live(50)).isEqualTo(new SequenceTracker.Step(false, 50, 50));
        applied(50);
        tracker.settled(40);
        assertThat(watermark.get()).as("below what was applied: no change").isEqualTo(50);
        tracker.settled(0);
        assertThat(watermark.get()).isEqualTo(50);
    }

    /** A publisher whose seq starts at the clock (ns since the epoch) stamped its batch 5 ms after it started. */
    private static final long STARTED = 1_796_000_000_000_000_000L;

    private static final double STAMPED = 1_796_000_000.005;

    @Test
    void aFirstSeqIsNoCountOfLostBatches() {
        assertThat(live(STARTED).countable()).isFalse();
        applied(STARTED);
        assertThat(live(0).countable())
                .as("the seq went back: a new process's batches from 0")
                .isTrue();
    }

    @Test
    void aClockStartedSeqThatPassesTheLastBatchStampIsANewProcessNotAGap() {
        live(STARTED);
        tracker.applied(STARTED, new byte[] {1}, STAMPED);
        SequenceTracker.Step gap = live(STARTED + 1_000);
        assertThat(gap.restarted()).as("a thousand batches of the same process").isFalse();
        assertThat(gap.countable()).isTrue();
        assertThat(gap.missing()).isEqualTo(999);
        tracker.applied(STARTED + 1_000, new byte[] {2}, STAMPED + 1);

        long stamp = 1_796_000_001_005_000_000L; // the stamp of the last batch, in ns
        SequenceTracker.Step within = live(stamp + SequenceTracker.CLOCK_MARGIN_NANOS - 1_000);
        assertThat(within.restarted()).as("within the margin: a gap").isFalse();
        SequenceTracker.Step restart = live(stamp + 2 * SequenceTracker.CLOCK_MARGIN_NANOS);
        assertThat(restart.restarted()).isTrue();
        assertThat(restart.why()).isEqualTo(SequenceTracker.Why.CLOCK);
        assertThat(restart.countable()).isFalse();
        assertThat(tracker.afterRestart()).isTrue();
    }

    @Test
    void aBufferSeenEmptyAtTheJoinVouchesForAClockStartedFirstSeqOnly() {
        assertThat(tracker.firstPublished(STARTED))
                .as("nothing seen of the buffer")
                .isFalse();
        tracker.bufferFoundEmpty();
        assertThat(tracker.firstPublished(STARTED)).isTrue();
        assertThat(tracker.firstPublished(7))
                .as("a counter from 0 publishes 0 first: a buffer starting at 7 turned over")
                .isFalse();
        tracker.forgetEmptyBuffer(); // the connection was lost meanwhile
        assertThat(tracker.firstPublished(STARTED)).isFalse();

        tracker.bufferFoundEmpty();
        applied(STARTED);
        assertThat(tracker.firstPublished(STARTED + 5))
                .as("something applied: a gap is a gap")
                .isFalse();
        tracker.restarted();
        tracker.bufferFoundEmpty();
        assertThat(tracker.firstPublished(STARTED + 5)).as("after a restart").isFalse();
    }

    @Test
    void noClockRuleWithoutAWallClockStamp() {
        live(0);
        tracker.applied(0, new byte[] {1}, 1.0); // a publisher that stamps no wall-clock time
        assertThat(live(STARTED).restarted()).isFalse();
        assertThat(live(STARTED).countable()).isTrue();
    }

    @Test
    void theWatermarkBatchReplayedWithOtherBytesIsAnotherProcess() {
        live(0);
        tracker.applied(0, new byte[] {1, 2, 3}, STAMPED);
        assertThat(tracker.sameProcess(0, new byte[] {1, 2, 3})).isTrue();
        assertThat(tracker.sameProcess(0, new byte[] {1, 2, 4})).isFalse();
        assertThat(tracker.sameProcess(1, new byte[] {9}))
                .as("a later seq: nothing tells")
                .isTrue();
        tracker.applied(1, new byte[] {9}, STAMPED);
        assertThat(tracker.sameProcess(1, new byte[] {9})).isTrue();
        watermark.restore(1, null, false); // a watermark restored without its batch (an older version's snapshot)
        assertThat(tracker.sameProcess(1, new byte[] {8}))
                .as("its bytes not known: nothing tells")
                .isTrue();
        watermark.restore(
                1, new SequenceWatermark.LastBatch(1, SequenceTracker.digest(new byte[] {9}), STAMPED), false);
        assertThat(tracker.sameProcess(1, new byte[] {8}))
                .as("restored with its batch (a version 4 snapshot): another process")
                .isFalse();
    }
}
