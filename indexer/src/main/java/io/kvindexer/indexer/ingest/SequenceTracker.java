package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.hash.BlockHasher;
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
 *       same (not below the current one: a replay on connect may have applied past the first live seq). So does
 *       a live seq at or below the watermark stamped more than {@link #CLOCK_MARGIN_NANOS} after the watermark's
 *       batch ({@link #stampedAfterWatermark}): a late copy of a replayed batch is stamped no later. The
 *       watermark is then reset and the message handled like a first one (replay from 0 when seq &gt; 0). A
 *       catch-up whose replay holds nothing from the watermark on shows the same before any live message
 *       ({@link #restarted});</li>
 *   <li>a publisher whose seq starts at the clock (one TensorRT-LLM revision starts at {@code time.time_ns()}, so a
 *       new process does not go back, it jumps ahead) restarted when a seq is at or past the nanosecond its last
 *       applied batch was stamped, plus {@link #CLOCK_MARGIN_NANOS}: one process counts up by one per batch from the
 *       nanosecond it started, so it can never reach the clock time of a batch it stamped later, whereas a new
 *       process starts at the clock. A seq counter from 0 never comes near a clock reading (about 1.8e18 in 2026);
 *       a batch without a wall-clock timestamp gives no such bound;</li>
 *   <li>a restart found by a replay ({@link #restarted}) while live messages were read on this attempt: messages
 *       of the old process may still wait in the socket, in order, before the new one's. Until a live seq goes back
 *       below the previous live seq (the new process's stream begins) or the engine's buffer holds a live message's
 *       exact bytes ({@link #vouched}), a live seq above the previous one is {@link Why#UNPROVEN}: not applied, only
 *       the engine's own copy of it is. The seq that goes back is measured as an attempt's first live message (its
 *       stamp shows a restart since the replay, which may have applied past it);</li>
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
    record Step(boolean restarted, long replayFrom, long replayUntil, Why why) {

        Step(boolean restarted, long replayFrom, long replayUntil) {
            this(restarted, replayFrom, replayUntil, restarted ? Why.WENT_BACK : Why.GAP);
        }

        /**
         * Whether the missing range counts batches the engine really published while this stream followed it: a
         * gap, or the first seqs of a process that counts from 0. A new registration's first seq says nothing of
         * what it missed (the engine ran before it; a clock-started seq is no count at all), nor does a new
         * clock-started process's.
         */
        boolean countable() {
            return why == Why.GAP || why == Why.WENT_BACK;
        }

        boolean needsReplay() {
            return replayFrom != replayUntil;
        }

        long missing() {
            return replayUntil - replayFrom;
        }
    }

    /** What a step's missing range is. */
    enum Why {
        /** batches after the watermark did not arrive */
        GAP,
        /** nothing applied yet: the engine's batches before this registration's first */
        JOIN,
        /** the seq went back: a new process's batches from 0 */
        WENT_BACK,
        /** the seq jumped past the clock time of the last batch: a new clock-started process */
        CLOCK,
        /**
         * after a restart found by a replay, a seq that continues the old process's live seqs: maybe the old
         * process's, still queued; not applied (nothing to replay for it: the engine is asked for what follows the
         * watermark)
         */
        UNPROVEN
    }

    /**
     * How far past the stamp of the last applied batch a clock-started seq must be to be a new process: a restart
     * (a process starting, its model loading) takes longer, and clocks of two hosts may differ by less; one process
     * would have to publish a billion batches between two that arrive to cross it.
     */
    static final long CLOCK_MARGIN_NANOS = 1_000_000_000L;

    /** Timestamps outside [2001-09-09, 2286-11-20] are no wall-clock seconds: no clock rule from them. */
    private static final double CLOCK_MIN_SECONDS = 1e9;

    private static final double CLOCK_MAX_SECONDS = 1e10;

    /** The seqs a clock-started publisher can start at: the nanoseconds of {@code [CLOCK_MIN, CLOCK_MAX]} seconds. */
    private static final long CLOCK_MIN_NANOS = (long) (CLOCK_MIN_SECONDS * 1e9);

    private static final long CLOCK_MAX_NANOS = Long.parseUnsignedLong("10000000000000000000"); // 1e10 s (above 2^63)

    private static final int UNDECODABLE_KEPT = 1024;

    private final SequenceWatermark watermark;
    /** recent live seqs whose payload did not decode (oldest first) */
    private final Set<Long> undecodable = new LinkedHashSet<>();

    /** the watermark when the attempt began (see {@link #begin}); before its first live message when not told */
    private long startedAt;

    private boolean begun;
    private boolean seenLive;
    private long previousLive;
    /** the watermark was reset because the engine restarted, and nothing of the new process was applied yet */
    private boolean afterRestart;
    /**
     * a replay found a new engine process, and no live message since showed that the socket delivers the new
     * process's stream (volatile: the replay thread reads it for the live bound)
     */
    private volatile boolean liveUnproven;
    /**
     * the engine's buffer answered a join's replay from seq 0 with nothing, after this attempt's SUB was connected,
     * and the connection has not been lost since (see {@link #firstPublished}; volatile: the replay thread sets and
     * reads it, the poller clears it)
     */
    private volatile boolean bufferSeenEmpty;
    /** the newest live message not applied while {@link #liveUnproven}: its seq and digest */
    private long unvouchedSeq;

    private long unvouchedDigest;

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

    /** {@link #onLive(long, double)} for a batch without a wall-clock timestamp. */
    Step onLive(long seq) {
        return onLive(seq, Double.NaN);
    }

    /**
     * Classifies one live seq, stamped {@code timestamp} (seconds) by the engine; resets the watermark when it reveals
     * a publisher restart.
     */
    Step onLive(long seq, double timestamp) {
        begin();
        boolean firstLive = !seenLive;
        long previous = previousLive;
        seenLive = true;
        previousLive = seq;

        long last = watermark.get();
        Why restart = null;
        if (liveUnproven) {
            if (Long.compareUnsigned(seq, previous) > 0) {
                return new Step(false, seq, seq, Why.UNPROVEN);
            }
            // it went back: the new process's own stream begins (its restart was handled when the replay found it)
            liveUnproven = false;
            if (last == SequenceWatermark.UNSET) {
                return new Step(false, 0, seq, Why.WENT_BACK);
            }
            // measured as an attempt's first live message: the previous live seq is the old process's, and the
            // replay from 0 may have applied past this one (a late copy), or the engine restarted once more since
            // (in place, no reconnect to show it): only the stamp tells
            firstLive = true;
        }
        if (last != SequenceWatermark.UNSET) {
            boolean wentBack = (firstLive
                            ? startedAt != SequenceWatermark.UNSET && Long.compareUnsigned(seq, startedAt) < 0
                            : Long.compareUnsigned(seq, previous) <= 0)
                    || stampedAfterWatermark(seq, timestamp);
            if (wentBack) {
                restart = Why.WENT_BACK;
            } else if (Long.compareUnsigned(seq, last + 1) > 0 && newClockProcess(seq)) {
                restart = Why.CLOCK;
            }
            if (restart != null) {
                watermark.reset();
                afterRestart = true;
                last = SequenceWatermark.UNSET;
            }
        }
        if (last == SequenceWatermark.UNSET) {
            return new Step(restart != null, 0, seq, restart != null ? restart : Why.JOIN);
        }
        if (Long.compareUnsigned(seq, last + 1) > 0) {
            return new Step(false, last + 1, seq, Why.GAP);
        }
        return new Step(false, seq, seq, Why.GAP);
    }

    /**
     * True when {@code seq}, not above the watermark, was stamped more than {@link #CLOCK_MARGIN_NANOS} after the
     * watermark's batch: not a late copy of a batch a replay applied (one process stamps its batches in seq order, so
     * a copy of one at or below the watermark is stamped no later than the watermark's), but another process's.
     * Without it a listener whose replay (a join's, a tail check's) applied past the live seqs it had read took a new
     * process's first seqs, which arrive live with no reconnect to show the restart, for duplicates and skipped them.
     * False when the watermark's batch, or a wall-clock timestamp of either, is not known.
     */
    boolean stampedAfterWatermark(long seq, double timestamp) {
        SequenceWatermark.LastBatch batch = watermark.lastBatch();
        if (batch == null
                || batch.seq() != watermark.get()
                || Long.compareUnsigned(seq, batch.seq()) > 0
                || !wallClock(timestamp)
                || !wallClock(batch.timestamp())) {
            return false;
        }
        return (timestamp - batch.timestamp()) * 1e9 > CLOCK_MARGIN_NANOS;
    }

    private static boolean wallClock(double seconds) {
        return seconds >= CLOCK_MIN_SECONDS && seconds <= CLOCK_MAX_SECONDS; // (NaN is not)
    }

    /**
     * True when {@code seq} can only come from a new process of a publisher whose seq starts at the clock: it is at
     * or past the nanosecond the last applied batch was stamped, plus {@link #CLOCK_MARGIN_NANOS} (see the class
     * comment). False when that batch, or a wall-clock timestamp of it, is not known.
     */
    boolean newClockProcess(long seq) {
        SequenceWatermark.LastBatch batch = watermark.lastBatch();
        if (batch == null) {
            return false;
        }
        double ts = batch.timestamp();
        if (!wallClock(ts)) {
            return false;
        }
        long bound = (long) (ts * 1e9) + CLOCK_MARGIN_NANOS; // below 2^63 for every ts allowed
        return Long.compareUnsigned(seq, bound) >= 0;
    }

    /**
     * Whether a replayed batch {@code seq} with {@code payload}, the first answer to a catch-up from the watermark,
     * was published by the process whose batches this stream applied: false when it is the watermark's own seq with
     * other bytes than those applied (an engine buffers the exact bytes it published, and another process's batch at
     * that seq has at least another timestamp), or a seq only a new clock-started process can have. True when
     * nothing tells (the watermark's batch is not known, e.g. restored from an older version's snapshot).
     */
    boolean sameProcess(long seq, byte[] payload) {
        SequenceWatermark.LastBatch batch = watermark.lastBatch();
        if (batch != null && batch.seq() == seq && seq == watermark.get()) {
            return batch.digest() == digest(payload);
        }
        return !(Long.compareUnsigned(seq, watermark.get()) > 0 && newClockProcess(seq));
    }

    /**
     * The watermark when the bytes of its batch are known, so that a replay asked for from it shows by its first
     * reply whether the engine is still the process that published it ({@link #sameProcess}); else
     * {@link SequenceWatermark#UNSET} (nothing applied, or a watermark restored or settled without its batch).
     */
    long anchor() {
        long now = watermark.get();
        SequenceWatermark.LastBatch batch = watermark.lastBatch();
        return batch != null && batch.seq() == now ? now : SequenceWatermark.UNSET;
    }

    /**
     * A join's replay from seq 0 found the engine's buffer empty, after this attempt's SUB was connected: whatever
     * the engine publishes from now on arrives live or stays in its buffer ({@link #firstPublished}).
     */
    void bufferFoundEmpty() {
        if (watermark.get() == SequenceWatermark.UNSET && !afterRestart) {
            bufferSeenEmpty = true;
        }
    }

    /** The connection was lost: what the engine published meanwhile reached neither the socket nor a look at its buffer. */
    void forgetEmptyBuffer() {
        bufferSeenEmpty = false;
    }

    /**
     * Whether an engine's buffer that begins at {@code bufferStart} shows that batch to be the first its process
     * published, so that nothing before it is missing, although its seq is above 0: the join found the buffer
     * empty after the SUB connected ({@link #bufferFoundEmpty}) and the connection held since, so every batch
     * published since either arrived live (none applied yet) or is in the buffer, whose oldest is then the first,
     * unless the PUB dropped more batches than the buffer holds; and {@code bufferStart} is a clock reading, where a
     * clock-started publisher begins (a counter from 0 publishes 0 first: a later start is a buffer that turned
     * over, a real loss).
     */
    boolean firstPublished(long bufferStart) {
        return bufferSeenEmpty
                && watermark.get() == SequenceWatermark.UNSET
                && !afterRestart
                && Long.compareUnsigned(bufferStart, CLOCK_MIN_NANOS) >= 0
                && Long.compareUnsigned(bufferStart, CLOCK_MAX_NANOS) <= 0;
    }

    /** True while the watermark is unset because the engine restarted (nothing of the new process applied yet). */
    boolean afterRestart() {
        return afterRestart && watermark.get() == SequenceWatermark.UNSET;
    }

    static long digest(byte[] payload) {
        return BlockHasher.xxh3(payload, 0);
    }

    /**
     * The engine restarted, seen by other means than a live seq (a replay that holds nothing from the watermark on):
     * the watermark is reset, and the attempt starts over as a new registration's (the next live seq is not measured
     * against the old process's seqs, so it does not read as a second restart).
     */
    void restarted() {
        watermark.reset();
        afterRestart = true;
        startedAt = SequenceWatermark.UNSET;
        // live messages read on this attempt's socket: the old process's may follow, so the next ones must prove
        // they are the new process's (see the class comment); none read: whatever comes is the engine's now
        liveUnproven = seenLive;
    }

    /** True while live messages may still be the old process's after a restart a replay found (see the class comment). */
    boolean liveUnproven() {
        return liveUnproven;
    }

    /** Live message {@code seq} with {@code payload} was not applied: it is {@link Why#UNPROVEN}. */
    void unvouched(long seq, byte[] payload) {
        unvouchedSeq = seq;
        unvouchedDigest = digest(payload);
    }

    /**
     * A replay handed over batch {@code seq} with {@code payload}: when those are the bytes of the newest live message
     * not applied, the live stream is the engine's own, and its messages need no proof any more.
     */
    void vouched(long seq, byte[] payload) {
        if (liveUnproven && seq == unvouchedSeq && digest(payload) == unvouchedDigest) {
            liveUnproven = false;
        }
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

    /** Batch {@code seq}, {@code payload} stamped {@code timestamp} by the engine, was decoded and applied. */
    void applied(long seq, byte[] payload, double timestamp) {
        watermark.passed(seq, new SequenceWatermark.LastBatch(seq, digest(payload), timestamp));
    }
}
