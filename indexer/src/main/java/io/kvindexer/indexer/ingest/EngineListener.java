package io.kvindexer.indexer.ingest;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * Receives one registration's engine KV-event stream: its lifecycle (pending, active, paused, failed) and what
 * {@code /workers} shows. The listener owns no thread: each attempt (start, and every resume) is a {@link Stream}
 * served by one of the process's {@link IngestPollers}, and its replays run on their replay threads. The sequence
 * rules are {@link SequenceTracker}'s, the replay protocol is {@link ReplayClient}'s, the frame format is
 * {@link Frames}', decoding and delivery are {@link BatchDelivery}'s; whether the engine connection is up is
 * {@link EngineLink}'s (Dynamo's status stays {@code active} while the SUB connection reconnects on its own).
 *
 * <p>Lost batches: when a gap cannot be filled (no replay endpoint, the engine's buffer no longer reaches back,
 * the engine does not answer) and this stream had applied batches before, the worker's blocks may be wrong: they
 * are dropped (as on a publisher restart) and live events rebuild them; {@code last_error} says so. The index
 * never claims a block it cannot vouch for.
 */
public final class EngineListener implements RunningListener {

    /** Why a paused listener is not exact ({@link Exactness#stoppedReading}). */
    static final String PAUSED =
            "paused: the engine's stream is not read (what it stores or removes meanwhile is" + " missed)";

    /** Why a resumed listener is not exact yet ({@link Exactness#readingAgain}). */
    static final String RESUMED = "resumed: what the engine published while its stream was not read shows in a"
            + " catch-up from its replay buffer, or without a replay endpoint in its next batch";

    private final ListenerSpec spec;
    private final SequenceWatermark watermark;
    private final ReadyGate gate;
    private final ListenerOptions options;
    private final ListenerLog log;
    private final BatchDelivery delivery;
    private final Exactness exactness;

    // lifecycle, guarded by this
    private ListenerStatus status = ListenerStatus.PENDING;
    private String lastError;
    private Stream current;
    private boolean started;
    private boolean closed;

    public EngineListener(
            ListenerSpec spec, SequenceWatermark watermark, BatchSink sink, ReadyGate gate, ListenerOptions options) {
        this.spec = Objects.requireNonNull(spec, "spec");
        this.watermark = Objects.requireNonNull(watermark, "watermark");
        this.gate = Objects.requireNonNull(gate, "gate");
        this.options = Objects.requireNonNull(options, "options");
        this.log = new ListenerLog(spec);
        this.exactness = options.catchUpOnConnect() && spec.replayEndpoint() != null
                ? Exactness.joining(options.degradedHold())
                : new Exactness(options.degradedHold());
        if (spec.replayEndpoint() == null && watermark.restoredFromSnapshot()) {
            exactness.replayStarted(Stream.RESTORED_FROM_SNAPSHOT); // not exact before its stream is even active
        }
        this.delivery = new BatchDelivery(spec, Objects.requireNonNull(sink, "sink"), options, log, exactness);
    }

    /** Hands the first attempt to a poller and returns at once (status {@code pending}). */
    public synchronized void start() {
        if (started || closed) {
            return;
        }
        started = true;
        launch(false);
    }

    public synchronized ListenerStatus status() {
        return status;
    }

    /** As {@code /workers} shows it: while the engine connection is down, that. */
    public synchronized String lastError() {
        return snapshot().lastError();
    }

    /** The engine connection's state is the running attempt's; a paused or failed listener has no socket. */
    @Override
    public synchronized ListenerSnapshot snapshot() {
        boolean running = current != null && status.running();
        return ListenerSnapshot.of(
                spec.endpoint(),
                status,
                lastError,
                running ? current.link().state() : EngineLink.State.NONE,
                exactness.read());
    }

    /** How complete the index is for this stream, kept across attempts; read by every query (no lock). */
    @Override
    public Exactness exactness() {
        return exactness;
    }

    /**
     * Test control: stops receiving and drops the socket; allowed from {@code pending} and {@code active}.
     *
     * @return false (and nothing changes) from any other status
     */
    @Override
    public boolean pause() {
        Stream attempt;
        synchronized (this) {
            if (!allowedFrom(ListenerStatus.PENDING, ListenerStatus.ACTIVE)) {
                return false;
            }
            attempt = current;
            status = ListenerStatus.PAUSED;
            exactness.stoppedReading(PAUSED); // before the stream stops: never exact while nothing is read
        }
        awaitStopped(attempt);
        return true;
    }

    /**
     * Test control: a new attempt with the same watermark; allowed from {@code paused} and {@code failed}.
     *
     * @return false (and nothing changes) from any other status, or while the previous attempt has not closed
     */
    @Override
    public boolean resume() {
        Stream previous;
        synchronized (this) {
            if (!allowedFrom(ListenerStatus.PAUSED, ListenerStatus.FAILED)) {
                return false;
            }
            previous = current;
        }
        if (!awaitStopped(previous)) {
            return false; // never two attempts applying batches at once (the stream logged why)
        }
        synchronized (this) {
            if (!allowedFrom(ListenerStatus.PAUSED, ListenerStatus.FAILED)) {
                return false;
            }
            status = ListenerStatus.PENDING;
            lastError = null;
            exactness.readingAgain(RESUMED);
            launch(true);
        }
        return true;
    }

    /** Stops the listener for good and closes its socket (linger 0). */
    @Override
    public void close() {
        stop();
    }

    @Override
    public boolean stop() {
        Stream stopped;
        synchronized (this) {
            closed = true;
            stopped = current;
        }
        return awaitStopped(stopped); // (again: a second call waits for an attempt that has not closed yet)
    }

    @Override
    public CompletableFuture<Void> closed() {
        Stream last;
        synchronized (this) {
            last = current; // (an earlier attempt closed before this one launched: resume waits for it)
        }
        return last == null ? CompletableFuture.completedFuture(null) : last.exited();
    }

    /** True when open and in one of the two statuses (a test control's precondition); called holding the lock. */
    private boolean allowedFrom(ListenerStatus one, ListenerStatus other) {
        return !closed && (status == one || status == other);
    }

    /** Stops the attempt and waits (bounded) for it; false when it has not closed by then (it logged that). */
    private static boolean awaitStopped(Stream attempt) {
        return attempt == null || attempt.stop(true);
    }

    /** {@code resumed}: an attempt after one that was paused or failed (the stream was not read meanwhile). */
    private void launch(boolean resumed) {
        Poller poller = options.pollers().leastLoaded();
        Stream stream = new Stream(this, poller, options.pollers(), resumed);
        current = stream;
        poller.add(stream);
    }

    /**
     * The first live seq that bounds the running attempt's replay of everything after a seq, or
     * {@link ReplayClient#EVERYTHING} while none does (for tests).
     */
    synchronized long replayBound() {
        return current == null ? ReplayClient.EVERYTHING : current.liveBound();
    }

    // ---- what the running attempt reports ----------------------------------------------------------------

    synchronized void becomeActive(Stream stream) {
        if (current == stream && !stream.isStopped() && !closed && status == ListenerStatus.PENDING) {
            status = ListenerStatus.ACTIVE;
        }
    }

    synchronized void fail(Stream stream, String error) {
        if (current == stream && !stream.isStopped() && !closed) {
            status = ListenerStatus.FAILED;
            lastError = error;
            exactness.stoppedReading("failed: " + error);
            log.error(error);
        }
    }

    synchronized void recordError(Stream stream, String error) {
        if (current == stream && !closed) {
            lastError = error;
        }
        log.warn(error);
    }

    ListenerSpec spec() {
        return spec;
    }

    SequenceWatermark watermark() {
        return watermark;
    }

    ReadyGate gate() {
        return gate;
    }

    ListenerOptions options() {
        return options;
    }

    ListenerLog log() {
        return log;
    }

    BatchDelivery delivery() {
        return delivery;
    }
}
