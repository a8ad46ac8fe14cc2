package io.kvindexer.indexer.ingest;

import java.util.List;
import java.util.Objects;
import org.zeromq.ZMQException;

/**
 * Receives one registration's engine KV-event stream: lifecycle (pending, active, paused, failed) and the receive
 * loop. The sequence rules are {@link SequenceTracker}'s, the replay protocol is {@link ReplayClient}'s, the
 * frame format is {@link Frames}', decoding and delivery are {@link BatchDelivery}'s; whether the engine connection is
 * up is {@link EngineLink}'s (Dynamo's status stays {@code active} while the SUB socket reconnects on its own).
 *
 * <p>Threading: each attempt (start, and every resume) runs on its own daemon thread, which owns both sockets
 * and does everything in one loop: live messages, replays, applying to the sink. Replay therefore happens
 * synchronously inside the loop, and live messages that arrive meanwhile wait in the SUB queue (receive HWM
 * one million messages) and are applied after the replayed batches, so a live {@code Removed(A)} is never
 * overtaken by a replayed {@code Stored(A)}.
 *
 * <p>Lost batches: when a gap cannot be filled (no replay endpoint, the engine's buffer no longer reaches back,
 * the engine does not answer) and this stream had applied batches before, the worker's blocks may be wrong: they
 * are dropped (as on a publisher restart) and live events rebuild them; {@code last_error} says so. The index
 * never claims a block it cannot vouch for.
 */
public final class EngineListener implements AutoCloseable {

    private static final int POLL_MILLIS = 100;

    private final ListenerSpec spec;
    private final SequenceWatermark watermark;
    private final ReadyGate gate;
    private final ListenerOptions options;
    private final IngestMetrics metrics;
    private final ListenerLog log;
    private final BatchDelivery delivery;

    // lifecycle, guarded by this
    private ListenerStatus status = ListenerStatus.PENDING;
    private String lastError;
    private Attempt current;
    private boolean started;
    private boolean closed;

    public EngineListener(
            ListenerSpec spec, SequenceWatermark watermark, BatchSink sink, ReadyGate gate, ListenerOptions options) {
        this.spec = Objects.requireNonNull(spec, "spec");
        this.watermark = Objects.requireNonNull(watermark, "watermark");
        this.gate = Objects.requireNonNull(gate, "gate");
        this.options = Objects.requireNonNull(options, "options");
        this.metrics = options.metrics();
        this.log = new ListenerLog(spec);
        this.delivery = new BatchDelivery(spec, Objects.requireNonNull(sink, "sink"), options.decoder(), metrics, log);
    }

    /** Starts the first attempt on its own thread and returns at once (status {@code pending}). */
    public synchronized void start() {
        if (started || closed) {
            return;
        }
        started = true;
        launch(null);
    }

    public synchronized ListenerStatus status() {
        return status;
    }

    /** As {@code /workers} shows it: while the engine connection is down, that. */
    public synchronized String lastError() {
        return snapshot().lastError();
    }

    /** The engine connection's state is the running attempt's; a paused or failed listener has no socket. */
    public synchronized ListenerSnapshot snapshot() {
        boolean running = current != null && (status == ListenerStatus.ACTIVE || status == ListenerStatus.PENDING);
        return ListenerSnapshot.of(
                spec.endpoint(), status, lastError, running ? current.link.state() : EngineLink.State.NONE);
    }

    /**
     * Test control: stops receiving and drops the sockets; allowed from {@code pending} and {@code active}.
     *
     * @return false (and nothing changes) from any other status
     */
    public boolean pause() {
        Attempt stopped;
        synchronized (this) {
            if (closed || !(status == ListenerStatus.PENDING || status == ListenerStatus.ACTIVE)) {
                return false;
            }
            stopped = current;
            status = ListenerStatus.PAUSED;
            if (stopped != null) {
                stopped.stopped = true;
            }
        }
        if (stopped != null) {
            stopped.awaitExit();
        }
        return true;
    }

    /**
     * Test control: a new attempt with the same watermark; allowed from {@code paused} and {@code failed}.
     *
     * @return false (and nothing changes) from any other status
     */
    public synchronized boolean resume() {
        if (closed || !(status == ListenerStatus.PAUSED || status == ListenerStatus.FAILED)) {
            return false;
        }
        status = ListenerStatus.PENDING;
        lastError = null;
        launch(current);
        return true;
    }

    /** Stops the listener for good and closes its sockets (linger 0). */
    @Override
    public void close() {
        Attempt stopped;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            stopped = current;
            if (stopped != null) {
                stopped.stopped = true;
            }
        }
        if (stopped != null) {
            stopped.awaitExit();
        }
    }

    private void launch(Attempt previous) {
        Attempt attempt = new Attempt(previous);
        current = attempt;
        Thread thread =
                new Thread(attempt, "kv-listener-" + Long.toUnsignedString(spec.instanceId()) + "-" + spec.dpRank());
        thread.setDaemon(true);
        attempt.thread = thread;
        thread.start();
    }

    private synchronized void becomeActive(Attempt attempt) {
        if (current == attempt && !attempt.stopped && !closed) {
            status = ListenerStatus.ACTIVE;
        }
    }

    private synchronized void fail(Attempt attempt, String error) {
        if (current == attempt && !attempt.stopped && !closed) {
            status = ListenerStatus.FAILED;
            lastError = error;
            log.error(error);
        }
    }

    private synchronized void recordError(Attempt attempt, String error) {
        if (current == attempt && !closed) {
            lastError = error;
        }
        log.warn(error);
    }

    private static String u(long v) {
        return Long.toUnsignedString(v);
    }

    /** One run of the socket loop, from connect to stop/failure. */
    private final class Attempt implements Runnable, ReplayClient.Target {

        private final Attempt previous;
        private final SequenceTracker tracker = new SequenceTracker(watermark);
        private final EngineLink link = EngineLink.of(spec.endpoint(), metrics, log);
        private volatile boolean stopped;
        private Thread thread;
        private Subscriber sub;
        private ReplayClient replay;

        Attempt(Attempt previous) {
            this.previous = previous;
        }

        void awaitExit() {
            if (thread == Thread.currentThread()) {
                return;
            }
            try {
                thread.join(30_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void run() {
            if (previous != null) {
                previous.awaitExit(); // never two attempts applying batches at once
            }
            try {
                sub = new Subscriber(
                        options.context(),
                        spec.endpoint(),
                        options.receiveHwm(),
                        options.handshakeTimeout(),
                        POLL_MILLIS,
                        metrics::handshakeRetry,
                        link);
                try {
                    sub.open();
                } catch (RuntimeException e) {
                    fail(
                            this,
                            "failed to connect ZMQ SUB socket to " + spec.endpoint() + ": "
                                    + (e.getMessage() != null ? e.getMessage() : e.toString()));
                    return;
                }
                while (!gate.await(POLL_MILLIS)) {
                    if (stopped) {
                        return;
                    }
                }
                if (stopped) {
                    return;
                }
                if (spec.replayEndpoint() != null) {
                    replay = new ReplayClient(
                            options.context(),
                            spec.replayEndpoint(),
                            options.replaySettings(),
                            (int) options.handshakeTimeout().toMillis(),
                            POLL_MILLIS,
                            () -> stopped,
                            metrics::handshakeRetry);
                }
                becomeActive(this);
                tracker.begin();
                // started from a known watermark (a restore, a re-registration, a resume): catch up at once
                boolean resumePending = replay != null && tracker.anyApplied();
                while (!stopped) {
                    if (resumePending && link.state().connected()) {
                        resumePending = false;
                        resume();
                        continue;
                    }
                    List<byte[]> frames;
                    try {
                        frames = sub.receive();
                    } catch (ZMQException e) {
                        if (!stopped) {
                            fail(this, "ZMQ recv failed for " + log.workerName() + ": " + e.getMessage());
                        }
                        return;
                    }
                    if (frames != null) {
                        resumePending = false; // the live stream's seq tracking takes over
                        handleLive(frames);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                if (!stopped) {
                    fail(this, "listener for " + log.workerName() + " stopped: " + e);
                }
            } finally {
                if (sub != null) {
                    sub.close();
                }
            }
        }

        private void handleLive(List<byte[]> frames) throws InterruptedException {
            if (!delivery.wellFormed(frames)) {
                return;
            }
            long seq = Frames.readSeq(frames.get(1));
            long before = watermark.get();
            SequenceTracker.Step step = tracker.onLive(seq);
            if (step.restarted()) {
                log.info("seq went back to " + u(seq) + " (applied up to " + u(before)
                        + "): the engine restarted; dropping its blocks");
                delivery.publisherRestarted();
            }
            if (step.needsReplay()) {
                recover(step.replayFrom(), step.replayUntil());
            }
            if (stopped) {
                return;
            }
            if (!tracker.isNew(seq)) {
                metrics.staleBatch();
                return;
            }
            if (!applyBatch(seq, frames.get(2))) {
                tracker.undecodable(seq);
            }
        }

        /**
         * Asks the engine for every batch after the watermark this attempt started from, once the SUB connection is
         * up (so what is published from then on reaches the live stream). What the engine no longer has is an
         * unrecoverable gap; an engine with nothing newer answers only its end marker, and a restarted one shows up
         * on the first live batch (a seq below the watermark).
         */
        private void resume() throws InterruptedException {
            long from = watermark.get() + 1;
            log.info("resuming after seq " + u(from - 1) + ": asking " + replay.endpoint() + " for what came after");
            ReplayClient.Outcome outcome = replay.replay(from, ReplayClient.EVERYTHING, this);
            if (outcome != null) {
                metrics.replay(outcome.result(), outcome.recovered());
            }
        }

        /** Fills {@code [from, until)} by replay when the engine offers it. */
        private void recover(long from, long until) throws InterruptedException {
            metrics.gapDetected(until - from);
            if (replay == null) {
                log.once("no_replay", "No replay endpoint configured; batches lost");
                metrics.batchesLost(until - from);
                lost(from, until, "batches " + u(from) + ".." + u(until - 1) + " lost: no replay endpoint");
                return;
            }
            ReplayClient.Outcome outcome = replay.replay(from, until, this);
            if (outcome != null) {
                metrics.replay(outcome.result(), outcome.recovered());
            }
        }

        @Override
        public boolean batch(long seq, byte[] payload) {
            return tracker.isNew(seq) && applyBatch(seq, payload);
        }

        @Override
        public void lost(long from, long until, String problem) {
            if (tracker.onlyUndecodable(from, until)) {
                return; // those seqs did arrive, as payloads that do not decode: counted as decode errors
            }
            boolean drop = tracker.anyApplied();
            if (replay == null && !drop) {
                return; // nothing held from this stream, and no replay to report on: only counted
            }
            boolean open = until == ReplayClient.EVERYTHING; // how many is not known
            metrics.gapUnrecoverable(open ? 0 : until - from);
            if (drop) {
                delivery.dropUnverifiable();
                problem = problem + "; dropped the blocks of " + log.workerName() + " ("
                        + (open ? "batches from " + u(from) : u(until - from) + " batches") + " lost), live events"
                        + " rebuild them";
            }
            recordError(this, problem);
        }

        private boolean applyBatch(long seq, byte[] payload) {
            if (!delivery.apply(seq, payload)) {
                return false;
            }
            tracker.applied(seq);
            return true;
        }
    }
}
