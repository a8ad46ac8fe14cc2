package io.kvindexer.indexer.ingest;

import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.Set;

/**
 * The exactness of one listener, kept across its attempts (pause/resume): {@code exact}, {@code replaying} or
 * {@code degraded} ({@link ExactnessState}) with a reason and since when. Told by the stream (replay begins and
 * ends, batches lost or skipped undecodable, the engine restarted) and by the delivery (an {@code AllBlocksCleared}
 * of a rank). A degraded listener stays so while the index may under-report the worker: until every rank it
 * delivered for sent {@code AllBlocksCleared}, until the engine is seen restarting, or until {@code hold} has passed
 * since the last loss (the engine has turned much of its cache over by then), whichever comes first; not at the
 * moment the lost blocks are dropped. A listener that reads no stream (paused, or failed to connect) is
 * {@code degraded} for as long, whatever its stream showed: the engine may store and remove blocks meanwhile; a new
 * attempt is {@code replaying} until its stream shows what it missed ({@link #readingAgain}).
 *
 * <p>{@link #exactNow} is what every query asks per named instance: one volatile read and a clock read, no lock.
 */
public final class Exactness {

    /** What {@code /workers} shows. */
    public record Reading(ExactnessState state, String reason, Instant since) {}

    private static final long EXACT_MARK = Long.MIN_VALUE;
    private static final long NOT_EXACT = Long.MAX_VALUE;

    private final long holdNanos;

    // guarded by this
    private ExactnessState state = ExactnessState.EXACT;
    private String reason;
    private Instant since;
    private boolean replayRunning;
    /** what the running (or last) replay fills */
    private String replayWhat;
    /** when the newest loss was reported */
    private Instant lastLoss;
    /** while degraded: the ranks whose AllBlocksCleared is still awaited */
    private final Set<Integer> uncleared = new HashSet<>();

    private long holdEndsNanos;
    /** while the listener reads no stream: why (what {@link #read} shows, as degraded); null while it reads */
    private String notReading;

    private Instant notReadingSince;

    /** {@link #EXACT_MARK}: exact; {@link #NOT_EXACT}: replaying; else the nanoTime a degradation's hold ends. */
    private volatile long inexactUntil = EXACT_MARK;

    public Exactness(Duration hold) {
        if (hold.isNegative()) {
            throw new IllegalArgumentException("the degraded hold must not be negative, got " + hold);
        }
        this.holdNanos = hold.toNanos();
        this.since = Instant.now();
    }

    /**
     * A new registration that will learn from the engine whether it missed anything ({@code replaying} until then:
     * the engine may have published long before).
     */
    static Exactness joining(Duration hold) {
        Exactness e = new Exactness(hold);
        e.replayStarted("joining: connecting to the engine");
        return e;
    }

    /** For a listener nobody tracks (test stand-ins): always exact. */
    public static Exactness untracked() {
        return new Exactness(Duration.ZERO);
    }

    /** True when the listener is exact now; what a query reads per instance, without a lock. */
    public boolean exactNow() {
        long until = inexactUntil;
        return until == EXACT_MARK || (until != NOT_EXACT && System.nanoTime() - until >= 0);
    }

    public synchronized Reading read() {
        settle();
        return notReading != null
                ? new Reading(ExactnessState.DEGRADED, notReading, notReadingSince)
                : new Reading(state, reason, since);
    }

    // ---- what the listener reports ---------------------------------------------------------------------------

    /**
     * The listener stopped reading its stream ({@code why}: paused, failed to connect): degraded until it reads
     * again, whatever the stream showed; what the stream reports meanwhile is kept for after.
     */
    synchronized void stoppedReading(String why) {
        settle();
        notReading = why;
        notReadingSince = Instant.now();
        publish();
    }

    /**
     * A new attempt reads the stream again: {@code replaying} ({@code what}) until it shows what was missed while
     * nothing was read (a catch-up, or the engine's next batch), unless degraded by its own rules.
     */
    synchronized void readingAgain(String what) {
        if (notReading == null) {
            return;
        }
        notReading = null;
        replayStarted(what);
        publish();
    }

    // ---- what the stream and the delivery report -------------------------------------------------------------

    /** A replay starts ({@code what}: which batches): an exact listener is replaying until it ends. */
    synchronized void replayStarted(String what) {
        settle();
        replayRunning = true;
        replayWhat = what;
        if (state == ExactnessState.EXACT) {
            become(ExactnessState.REPLAYING, what);
        } else if (state == ExactnessState.REPLAYING) {
            reason = what; // what runs now; since stays when the listener stopped being exact
        }
    }

    /** The replay ended; what it could not bring was reported to {@link #lost} before. */
    synchronized void replayEnded() {
        settle();
        replayRunning = false;
        if (state == ExactnessState.REPLAYING) {
            become(ExactnessState.EXACT, null);
        }
    }

    /** Batches of the stream are missing for good; {@code ranks}: every rank the stream delivered for. */
    synchronized void lost(String why, Set<Integer> ranks) {
        settle();
        if (state != ExactnessState.DEGRADED) {
            become(ExactnessState.DEGRADED, why);
        } else {
            reason = why; // the newest loss; since stays when it began
        }
        uncleared.addAll(ranks);
        lastLoss = Instant.now();
        holdEndsNanos = System.nanoTime() + holdNanos;
        publish();
    }

    /**
     * Blocks of {@code rank} went that no replay of this listener brings back (an index write it did not deliver
     * failed: recovery's adopt, a reattach, block expiry; or {@code /unregister} dropped them before the stream came
     * back): degraded as for a lost batch, until the rank's {@code AllBlocksCleared}.
     */
    public void blocksDropped(String why, int rank) {
        lost(why, Set.of(rank));
    }

    /** The engine sent {@code AllBlocksCleared} for {@code rank}: what it holds there is known again. */
    synchronized void cleared(int rank) {
        if (state != ExactnessState.DEGRADED) {
            return;
        }
        uncleared.remove(rank);
        if (uncleared.isEmpty()) {
            recovered(Instant.now());
        }
    }

    /** A new engine process: nothing it held before is owed, so a degradation ends. */
    synchronized void restarted() {
        if (state == ExactnessState.DEGRADED) {
            recovered(Instant.now());
        }
    }

    // ---- internals -------------------------------------------------------------------------------------------

    /** The hold of a degradation ran out: exact again (or replaying, while a replay runs). */
    private void settle() {
        if (state == ExactnessState.DEGRADED && System.nanoTime() - holdEndsNanos >= 0) {
            recovered(lastLoss.plusNanos(holdNanos)); // when the hold ran out, not when someone looked
        }
    }

    private void recovered(Instant at) {
        uncleared.clear();
        become(replayRunning ? ExactnessState.REPLAYING : ExactnessState.EXACT, replayRunning ? replayWhat : null, at);
    }

    private void become(ExactnessState next, String why) {
        become(next, why, Instant.now());
    }

    private void become(ExactnessState next, String why, Instant at) {
        state = next;
        reason = why;
        since = at;
        publish();
    }

    private void publish() {
        inexactUntil = notReading != null
                ? NOT_EXACT
                : switch (state) {
                    case EXACT -> EXACT_MARK;
                    case REPLAYING -> NOT_EXACT;
                    case DEGRADED -> holdEndsNanos;
                };
    }
}
