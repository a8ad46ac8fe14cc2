package io.kvindexer.indexer.ingest;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The last applied sequence number of one registration (u64; {@link #UNSET} = 2^64-1 before the first batch).
 * Owned by the registry, not the listener, so it survives unregister/register (compatibility.md, Where we differ on purpose).
 *
 * <p>The watermark passes a batch when it is handed to the index. When the index's writer has applied it, the
 * {@link #onApplied hook}, if one is set, is told, with when the batch was handed over: a lag measured there needs no
 * observer that runs barriers through the writer's queue, and splits into the stretch before the writer and the
 * writer's own (the fleet bench's lag).
 */
public final class SequenceWatermark {

    public static final long UNSET = -1L;

    /**
     * Told on the writer thread, right after the index applied batch {@code seq}: when it was handed to the index
     * ({@code handedNanos}) and when applied ({@code appliedNanos}), both nanoTime.
     */
    @FunctionalInterface
    public interface AppliedHook {
        void applied(long seq, long handedNanos, long appliedNanos);
    }

    /**
     * The newest batch that passed: its seq, an XXH3-64 digest of its payload bytes and the engine's timestamp of it
     * (seconds). An engine's replay buffer holds the exact bytes it published, so the digest tells whether a replayed
     * batch of that seq is the same one or another process's; the timestamp bounds where a clock-started seq of a new
     * process can begin ({@link SequenceTracker}).
     */
    public record LastBatch(long seq, long digest, double timestamp) {}

    private final AtomicLong last = new AtomicLong(UNSET);
    /** null: unknown (nothing passed in this process since the last reset, or a watermark restored by {@link #set}) */
    private volatile LastBatch lastBatch;
    /** when a batch last passed ({@link #passed}); 0: never in this process */
    private volatile long passedAtMillis;
    /** restored from a snapshot and no batch since: see {@link #restoredFromSnapshot} */
    private volatile boolean fromSnapshot;

    private volatile AppliedHook hook;

    public long get() {
        return last.get();
    }

    public void set(long seq) {
        last.set(seq);
        fromSnapshot = false; // after the seq, as in passed
    }

    /**
     * A watermark carried over from another process of the indexer (a snapshot, a peer's dump), with what that
     * process knew of its batch (null: nothing), so that the first replay after the restore can tell the engine that
     * published it from one that restarted since ({@link SequenceTracker#sameProcess}). A batch of another seq is not
     * taken. {@code fromSnapshot}: it comes from this replica's own snapshot file, which is as old as the replica's
     * downtime, or from a peer's dump that marked it so (the peer's own such watermark, not proven yet); not from a
     * peer's dump otherwise, whose watermark meets the live stream.
     */
    public void restore(long seq, LastBatch batch, boolean fromSnapshot) {
        lastBatch = batch != null && batch.seq() == seq ? batch : null;
        this.fromSnapshot = fromSnapshot && seq != UNSET;
        last.set(seq);
    }

    /**
     * Whether the watermark was restored from a snapshot (this replica's, or one a peer restored and passed on in
     * its dump), or its worker came back within {@code --unregister-grace}, and no batch has passed since: nobody
     * listened to the engine meanwhile, so what it published then is not known to be here. A cut carries it ({@code SavedRegistration.fromSnapshot}).
     */
    public boolean restoredFromSnapshot() {
        return fromSnapshot;
    }

    /**
     * Forgets everything (a new engine process). A {@link #set} keeps the last batch: its seq says which one it is,
     * and its timestamp is still a lower bound for a new process's start.
     */
    public void reset() {
        fromSnapshot = false;
        lastBatch = null;
        last.set(UNSET);
    }

    /**
     * Batch {@code seq} was decoded and handed to the index now, and this is what is known of it (a restore uses
     * {@link #restore}, a settled loss {@link #set}).
     */
    void passed(long seq, LastBatch batch) {
        lastBatch = batch;
        last.set(seq);
        fromSnapshot = false; // after the seq: a cut that reads the mark cleared reads this seq (WorkerRegistry)
        passedAtMillis = System.currentTimeMillis();
    }

    /** The newest batch that passed, or null when not known. */
    LastBatch lastBatch() {
        return lastBatch;
    }

    /**
     * The batch at the watermark, when known: what a state cut saves beside the seq ({@link #restore}); null when
     * nothing is known of it (nothing applied, a watermark restored or settled without its batch).
     */
    public LastBatch watermarkBatch() {
        LastBatch batch = lastBatch;
        return batch != null && batch.seq() == last.get() ? batch : null;
    }

    /** The last seq, and when a batch last passed in this process. */
    public StreamProgress progress() {
        long at = passedAtMillis;
        return new StreamProgress(last.get(), at == 0 ? null : Instant.ofEpochMilli(at));
    }

    /** From now on {@code hook} (null: none) is told of every batch of this registration the index applies. */
    public void onApplied(AppliedHook hook) {
        this.hook = hook;
    }

    /** When a batch is handed to the index, for {@link #applied}: nanoTime with a hook, else 0 (not read). */
    long handedNow() {
        return hook == null ? 0 : System.nanoTime();
    }

    /** On the writer thread, once batch {@code seq} is applied (one writer per worker: in seq order). */
    void applied(long seq, long handedNanos) {
        AppliedHook h = hook;
        if (h != null) {
            h.applied(seq, handedNanos, System.nanoTime());
        }
    }
}
