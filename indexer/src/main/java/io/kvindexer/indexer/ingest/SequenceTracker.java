package io.kvindexer.indexer.ingest;

import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Set;

/**
 * The sequence rules of one listener attempt, without sockets. The watermark is the registry's and outlives the
 * attempt; the attempt itself remembers whether it saw a live message yet and the previous live seq.
 *
 * <ul>
 *   <li>watermark unset and seq &gt; 0: replay {@code [0, seq)} first (slow joiner, first registration);</li>
 *   <li>seq &gt; watermark + 1: a gap, replay {@code [watermark + 1, seq)};</li>
 *   <li>publisher restart: one engine process only counts up, so a live seq not above the previous live seq of
 *       this attempt means a new engine process; on the first live message of an attempt (no previous live seq
 *       yet, e.g. after re-registration) a seq strictly below the watermark the attempt started from means the
 *       same (not below the current one: a replay on connect may have applied past the first live seq). The
 *       watermark is then reset and the message handled like a first one (replay from 0 when seq &gt; 0). A
 *       catch-up whose replay holds nothing from the watermark on shows the same before any live message
 *       ({@link #restarted});</li>
 *   <li>a seq not above the watermark (a duplicate, or a batch a replay already applied) is skipped;</li>
 *   <li>the watermark advances only when a batch decodes and is applied ({@link #applied}).</li>
 * </ul>
 * All comparisons are unsigned: the seq is a u64 on the wire.
 */
final class SequenceTracker {

    /**
     * What a live seq asks for, in this order: drop the worker's blocks (restart), fill {@code [replayFrom,
     * replayUntil)} (empty when equal), then apply the message unless {@link #isNew} says it is stale by then.
     */
    record Step(boolean restarted, long replayFrom, long replayUntil) {

        boolean needsReplay() {
            return replayFrom != replayUntil;
        }

        long missing() {
            return replayUntil - replayFrom;
        }
    }

    private static final int UNDECODABLE_KEPT = 1024;

    private final SequenceWatermark watermark;
    /** recent live seqs whose payload did not decode (oldest first) */
    private final Set<Long> undecodable = new LinkedHashSet<>();

    /** the watermark when the attempt began (see {@link #begin}); before its first live message when not told */
    private long startedAt;

    private boolean begun;
    private boolean seenLive;
    private long previousLive;

    SequenceTracker(SequenceWatermark watermark) {
        this.watermark = Objects.requireNonNull(watermark, "watermark");
    }

    /** The attempt begins here (before a replay on connect): what the engine sent before is below the watermark. */
    void begin() {
        if (!begun) {
            begun = true;
            startedAt = watermark.get();
        }
    }

    /** Classifies one live seq; resets the watermark when it reveals a publisher restart. */
    Step onLive(long seq) {
        begin();
        boolean firstLive = !seenLive;
        long previous = previousLive;
        seenLive = true;
        previousLive = seq;

        long last = watermark.get();
        boolean restarted = false;
        if (last != SequenceWatermark.UNSET) {
            restarted = firstLive
                    ? startedAt != SequenceWatermark.UNSET && Long.compareUnsigned(seq, startedAt) < 0
                    : Long.compareUnsigned(seq, previous) <= 0;
            if (restarted) {
                watermark.reset();
                last = SequenceWatermark.UNSET;
            }
        }
        if (last == SequenceWatermark.UNSET) {
            return new Step(restarted, 0, seq);
        }
        if (Long.compareUnsigned(seq, last + 1) > 0) {
            return new Step(false, last + 1, seq);
        }
        return new Step(false, seq, seq);
    }

    /**
     * The engine restarted, seen by other means than a live seq (a replay that holds nothing from the watermark on):
     * the watermark is reset, and the attempt starts over as a new registration's (the next live seq is not measured
     * against the old process's seqs, so it does not read as a second restart).
     */
    void restarted() {
        watermark.reset();
        startedAt = SequenceWatermark.UNSET;
        seenLive = false;
    }

    /** True when {@code seq} is above the watermark (or nothing was applied yet): it must be applied. */
    boolean isNew(long seq) {
        long now = watermark.get();
        return now == SequenceWatermark.UNSET || Long.compareUnsigned(seq, now) > 0;
    }

    /** True once a batch of this stream was applied (and not dropped since by a restart): its blocks are held. */
    boolean anyApplied() {
        return watermark.get() != SequenceWatermark.UNSET;
    }

    /** A message with this seq (live or replayed) arrived but did not decode (the watermark stays where it was). */
    void undecodable(long seq) {
        if (undecodable.size() == UNDECODABLE_KEPT) {
            undecodable.remove(undecodable.iterator().next());
        }
        undecodable.add(seq);
    }

    /** True when a message with this seq arrived (live or replayed) and did not decode (one of the recent ones). */
    boolean arrivedUndecodable(long seq) {
        return undecodable.contains(seq);
    }

    /**
     * True when every seq of {@code [from, until)} arrived (live or replayed) and did not decode: a replay that
     * cannot return them lost nothing new (the bad payloads were counted as decode errors, as every malformed message
     * is).
     */
    boolean onlyUndecodable(long from, long until) {
        return notArrived(from, until) == 0;
    }

    /**
     * How many seqs of {@code [from, until)} did not arrive: those that arrived live and did not decode are counted
     * as decode errors, not again as lost batches.
     */
    long notArrived(long from, long until) {
        long missing = until - from;
        for (long s : undecodable) {
            if (Long.compareUnsigned(s - from, until - from) < 0) {
                missing--;
            }
        }
        return missing;
    }

    /**
     * Every batch below {@code seq} was applied or reported lost (an open-ended replay bounded by the live seq
     * {@code seq}): the watermark moves up to {@code seq - 1}, as applying the batch after a lost range does, so
     * {@code seq} is classified as contiguous instead of asking for the lost range again.
     */
    void settled(long seq) {
        long now = watermark.get();
        if (seq != 0 && (now == SequenceWatermark.UNSET || Long.compareUnsigned(now, seq - 1) < 0)) {
            watermark.set(seq - 1);
        }
    }

    /** A batch with this seq was decoded and applied. */
    void applied(long seq) {
        watermark.passed(seq);
    }
}
