package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.event.KvEventBatch;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One attempt of a listener on its poller: the SUB socket, the sequence rules ({@link SequenceTracker}) and, while a
 * gap is replayed, the hand-over to a replay thread. The poller thread owns everything here except while
 * {@link #replaying}: then the replay thread does, and the poller leaves the socket unread (live messages wait in
 * the kernel's buffers and at the engine, and are applied after the replayed batches, so a live {@code Removed(A)}
 * is never overtaken by a replayed {@code Stored(A)}). The hand-over in both directions goes through a queue (a
 * happens-before edge).
 *
 * <p>A replay of everything after a seq (a catch-up on connect, or a join) has no end of its own: an engine that
 * turns busy meanwhile would be chased through its buffer, and every jump of the buffer past the next expected seq
 * would count as a loss, although the live stream holds every batch since the connection. So while one runs, the
 * poller reads one live message: its seq bounds the replay ({@link #liveBound}), and it is handled like any live
 * message once the replay ends.
 *
 * <p>A PUB socket drops what its high-water mark cannot hold. A drop in the middle of the stream shows as a gap at
 * the next batch, but a dropped tail shows only when the engine sends again, which an idle engine does not. So when
 * the stream has been quiet for {@link ListenerOptions#tailCheckAfter} after a spell in which it was behind, the
 * engine is asked for everything after the watermark, the same open-ended replay as a catch-up; usually it answers
 * "nothing". Only a stream that was behind is asked ({@link Subscriber#wasBehind}, a full turn, or the ingest queue
 * full): a PUB queues, and drops, only while TCP holds it back, so a stream that never was behind cannot have lost
 * a tail, and a fleet of mostly idle engines costs no replays.
 */
final class Stream implements ReplayClient.Target {

    /**
     * Why a listener without a replay endpoint whose watermark came from a snapshot (this replica's own, or one a peer
     * restored and passed on before its engine's next batch) or from a comeback within {@code --unregister-grace} is
     * not exact: nobody listened since (a peer's dump is current otherwise: its listener is exact at once).
     */
    static final String RESTORED_FROM_SNAPSHOT = "restored from a snapshot (this replica's, or one a peer passed on)"
            + " or kept by --unregister-grace: no replay endpoint, the engine's next batch shows whether any were"
            + " missed while no replica listened";

    /** how long a new registration waits for a first live batch before it asks an idle engine for its buffer */
    private static final long CATCH_UP_QUIET_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final EngineListener owner;
    private final Poller poller;
    private final IngestPollers threads;
    private final SequenceTracker tracker;
    private final EngineLink link;
    /** completes once the socket is closed for good ({@link #finish}): nothing of this attempt applies after it */
    private final CompletableFuture<Void> exited = new CompletableFuture<>();

    private final Subscriber sub;
    private final ReplayClient replay;
    private volatile boolean stopped;
    private boolean open;
    private boolean active;
    private boolean replaying;
    private boolean resumePending;
    /** a new registration that has not yet learned whether it missed anything: {@code replaying} until it does */
    private boolean joining;
    /** when a pending resume may start (nanoTime) */
    private long resumeAt;
    /** the live message that showed a gap: applied after the replay */
    private List<byte[]> heldLive;
    /** a replay of everything after a seq runs: one live message is read to bound it */
    private boolean openEnded;
    /** the first live message read while an open-ended replay runs: handled when it ends */
    private List<byte[]> firstLive;
    /** {@link #firstLive}'s seq, for the replay thread; {@link ReplayClient#EVERYTHING} while there is none */
    private volatile long liveBound = ReplayClient.EVERYTHING;
    /** the end of the highest range the running replay reported lost (unsigned; EVERYTHING is the highest) */
    private volatile long lostUntil;
    /**
     * whether the running replay told {@link Exactness} (a tail check does not: usually nothing was missing; unless it
     * finds a restart); set on the poller before the replay and read there after it (the hand-overs order it)
     */
    private boolean announced;
    /** the stream was behind since the engine was last asked what followed its last batch (see the class comment) */
    private boolean tailUnchecked;
    /** when the last live message was read (nanoTime) */
    private long lastLiveAt;
    /**
     * not exact until the next live batch shows whether any were missed: reconnected without a replay endpoint, or
     * resumed (with one, unless its catch-up shows it first)
     */
    private boolean awaitingNext;
    /** an attempt after a paused or failed one: the engine's stream was not read meanwhile */
    private final boolean resumed;

    Stream(EngineListener owner, Poller poller, IngestPollers threads, boolean resumed) {
        this.owner = owner;
        this.resumed = resumed;
        this.poller = poller;
        this.threads = threads;
        ListenerOptions options = owner.options();
        this.tracker = new SequenceTracker(owner.watermark());
        this.link = EngineLink.of(owner.spec().endpoint(), options.metrics(), owner.log(), this::reconnected);
        this.sub = new Subscriber(
                poller.selector(),
                this,
                owner.spec().endpoint(),
                options.handshakeTimeout(),
                options.metrics()::handshakeRetry,
                link,
                threads.lookup(),
                () -> poller.submit(this, () -> {})); // a lookup's end: this stream's duties at once
        this.replay = owner.spec().replayEndpoint() == null
                ? null
                : new ReplayClient(
                        options.context(),
                        owner.spec().replayEndpoint(),
                        options.replaySettings(),
                        () -> stopped,
                        options.metrics()::handshakeRetry);
    }

    EngineLink link() {
        return link;
    }

    // ---- on the poller thread --------------------------------------------------------------------------

    void open() {
        if (stopped) {
            finish();
            return;
        }
        try {
            sub.open();
            open = true;
        } catch (RuntimeException e) {
            cannotConnect(e.getMessage() != null ? e.getMessage() : e.toString());
        }
    }

    /** The endpoint cannot be connected to at all (a bad endpoint, a host name that does not resolve). */
    private void cannotConnect(String why) {
        owner.fail(this, "failed to connect ZMQ SUB socket to " + owner.spec().endpoint() + ": " + why);
        finish();
    }

    /** The per-turn duties: stop, handshake deadline, the ready gate, a resume on connect. */
    void tick() {
        if (stopped) {
            finish();
            return;
        }
        if (!open || replaying) {
            return;
        }
        sub.tick();
        if (!active) {
            if (!owner.gate().isOpen()) {
                return; // connected, but nothing is read before the gate opens
            }
            active = true;
            owner.becomeActive(this);
            tracker.begin();
            // Started from a known watermark (a restore, a re-registration, a resume): catch up at once. A new
            // registration learns what it missed from the first live batch ([0, seq) is replayed); when none
            // comes within a quiet spell, the engine is asked for its buffer, so one that joined a running engine
            // that is idle now learns at once whether it is whole. Waiting keeps that replay from racing a busy
            // engine's stream, whose own gap replay is bounded by the live seq.
            boolean known = tracker.anyApplied();
            joining = replay != null && !known && owner.options().catchUpOnConnect();
            resumePending = (replay != null && known) || joining;
            resumeAt = System.nanoTime() + (known ? 0 : CATCH_UP_QUIET_NANOS);
            if (joining) { // replaying since the registration (Exactness.joining): now it waits for the engine
                owner.exactness().replayStarted("joining: waiting for the engine's first batch, or its buffer");
            } else if (replay == null && owner.watermark().restoredFromSnapshot()) {
                // (EngineListener started it so; again here for a watermark restored after the listener started)
                awaitingNext = true;
                owner.exactness().replayStarted(RESTORED_FROM_SNAPSHOT);
            } else if (resumed && known) {
                // replaying since the resume (Exactness.readingAgain): the catch-up settles it, or without a replay
                // endpoint the next batch; a batch before the catch-up takes over from it, and settles it too
                awaitingNext = true;
            } else if (resumed) {
                owner.exactness().replayEnded(); // nothing of the stream held: its first batch tells, as a new one's
            }
        }
        if (!threads.inflight().hasRoom()) {
            // nothing is read at the ingest budget: the engine's silence is ours, so no tail check (whose replay
            // would add to the load that stopped the reading) before it has been quiet while we listened
            lastLiveAt = System.nanoTime();
        }
        if (resumePending && link.state().connected() && System.nanoTime() - resumeAt >= 0) {
            resumePending = false;
            String what = joining
                    ? "joining: the engine sent nothing, asking for its buffer from seq 0"
                    : tracker.anyApplied()
                            ? "catching up after seq " + u(owner.watermark().get())
                            : "reconnected before any batch: asking for the engine's buffer from seq 0";
            joining = false; // the catch-up's end settles it
            startOpenEnded(what, true, this::resume);
        } else if (tailCheckDue()) {
            startOpenEnded(
                    "checking after seq " + u(owner.watermark().get()) + ": the engine went quiet",
                    false,
                    this::checkTail);
        }
    }

    /**
     * The connection came back after a loss. A SUB receives nothing while disconnected, so what the engine published
     * meanwhile is missing, and an engine quiet since then would never show it by a gap: caught up at once, as on
     * connect; without a replay endpoint the next live batch tells, and until then the listener is not exact.
     */
    private void reconnected() {
        if (!tracker.anyApplied()) {
            tracker.forgetEmptyBuffer(); // what the engine published meanwhile is no longer known to be in reach
        }
        if (!active || stopped) {
            return; // a join not yet active finds out what it missed by itself
        }
        if (replay != null) {
            // nothing applied yet (a join that found the engine empty) is no exception: an engine that published
            // while the connection was down and is quiet now would never show it by a gap ("joining": from seq 0)
            resumePending = true;
            resumeAt = System.nanoTime();
        } else if (tracker.anyApplied() && !awaitingNext) {
            awaitingNext = true;
            owner.exactness()
                    .replayStarted("reconnected: no replay endpoint, the engine's next batch shows whether any"
                            + " were missed meanwhile");
        }
    }

    private boolean tailCheckDue() {
        Duration quiet = owner.options().tailCheckAfter();
        return tailUnchecked
                && replay != null
                && !quiet.isZero()
                && !resumePending
                && link.state().connected()
                && !sub.receiving() // a message still on its way: the engine is not quiet
                && System.nanoTime() - lastLiveAt >= quiet.toNanos();
    }

    /** A replay of everything after the watermark, bounded by the first live message that arrives meanwhile. */
    private void startOpenEnded(String what, boolean announce, Runnable work) {
        openEnded = true;
        lostUntil = 0;
        tailUnchecked = false; // it reaches the engine's newest batch, or the live message that bounds it
        startReplay(what, announce, work);
    }

    boolean readable() {
        return open && active && !replaying && !stopped;
    }

    /** Whether the poller should read this stream now: to handle live messages, or to bound an open-ended replay. */
    boolean wantsRead() {
        return readable() || boundPending();
    }

    private boolean boundPending() {
        return open && active && replaying && openEnded && firstLive == null && !stopped;
    }

    /** The connection, for the poller (read interest, selected keys, messages kept from a read). */
    Subscriber subscriber() {
        return sub;
    }

    /**
     * Reads and handles up to {@code max} live messages, stopping early when one starts a replay or when the
     * process's unapplied bytes reach {@code --ingest-queue-bytes} (so the bound is overshot by at most one batch per
     * poller thread, not by a whole turn).
     */
    void drain(int max) {
        InflightBytes inflight = threads.inflight();
        if (boundPending()) {
            readBound();
            return;
        }
        int read = 0;
        while (read < max && readable() && inflight.hasRoom()) {
            List<byte[]> frames = sub.receiveNow();
            if (frames == null) {
                break;
            }
            read++;
            if (!tracker.liveUnproven()) {
                resumePending = false; // the live stream's seq tracking takes over
            }
            handleLive(frames);
        }
        if (read > 0) {
            lastLiveAt = System.nanoTime();
        }
        if (sub.wasBehind() || read == max || !inflight.hasRoom()) {
            // behind the engine: only now can its PUB queue be full and drop (see the class comment)
            tailUnchecked = true;
        }
    }

    private void handleLive(List<byte[]> frames) {
        BatchDelivery delivery = owner.delivery();
        if (!delivery.wellFormed(frames)) {
            return;
        }
        long seq = Frames.readSeq(frames.get(1));
        // decoded before its seq is believed: the seq of a payload that does not decode (a duplicate, or one far
        // ahead) is as malformed as the payload, and must not read as a restart or a gap that drops blocks
        KvEventBatch batch = delivery.decode(seq, frames.get(2));
        if (batch == null) {
            if (tracker.isNew(seq)) {
                undecodable(seq);
            }
            return;
        }
        long before = owner.watermark().get();
        boolean waited = joining || awaitingNext; // waited for this batch to learn what was missed
        joining = false;
        awaitingNext = false;
        SequenceTracker.Step step = tracker.onLive(seq, batch.timestamp());
        if (step.why() == SequenceTracker.Why.UNPROVEN) {
            unproven(seq, frames.get(2));
            return;
        }
        if (step.restarted()) {
            owner.log()
                    .info((step.why() == SequenceTracker.Why.CLOCK
                                    ? "seq jumped to " + u(seq) + ", past the clock time of batch " + u(before)
                                            + " (a publisher whose seq starts at the clock)"
                                    : "seq went back to " + u(seq) + " (applied up to " + u(before) + ")")
                            + ": the engine restarted; dropping its blocks");
            delivery.publisherRestarted();
        }
        // every seq of a "gap" that arrived and did not decode: a replay would bring the same bytes (an engine
        // buffers what it published), so it is not asked for; those seqs were counted and degrade the listener
        if (step.needsReplay() && !tracker.onlyUndecodable(step.replayFrom(), step.replayUntil())) {
            long missing = tracker.notArrived(step.replayFrom(), step.replayUntil());
            owner.options().metrics().gapDetected(missing);
            if (replay == null) {
                if (step.countable()) {
                    owner.log().once("no_replay", "No replay endpoint configured; batches lost");
                    owner.options().metrics().batchesLost(missing);
                } else {
                    // a join (or a new clock-started process): nothing this stream followed was lost, but what the
                    // engine stored before is not indexed until it is stored again. Its own kind, so that a real
                    // loss later is still logged
                    owner.log()
                            .once(
                                    "no_replay_join",
                                    "No replay endpoint configured; what the engine published before seq " + u(seq)
                                            + " (before this listener joined) is not indexed until stored again");
                }
                lost(step.replayFrom(), step.replayUntil(), lostRange(step, missing) + ": no replay endpoint");
                // reported: the range is behind the watermark now, as when the batch after it applies; else a
                // batch after it that does not decode leaves it there, and the next one reports it again
                tracker.settled(step.replayUntil());
            } else {
                heldLive = frames; // decoded again after the replay, whose batches come first (their cache groups too)
                long from = step.replayFrom();
                long until = step.replayUntil();
                startReplay("replaying batches " + u(from) + ".." + u(until - 1), true, () -> recover(from, until));
                return; // the replay's end settles what was waited for
            }
        }
        if (waited) {
            owner.exactness().replayEnded(); // a loss it showed was reported above
        }
        applyLive(seq, batch, frames.get(2));
    }

    private static String lostRange(SequenceTracker.Step step, long missing) {
        if (!step.countable()) { // how many came before is not known (see Step.countable)
            return "the batches before seq " + u(step.replayUntil()) + " (if any) are not known";
        }
        String range = "batches " + u(step.replayFrom()) + ".." + u(step.replayUntil() - 1);
        return missing == step.missing()
                ? range + " lost"
                : u(missing) + " of " + range + " lost (the others arrived and did not decode)";
    }

    /**
     * A live message after a restart a replay found that may be the old process's, still queued: not applied. When it
     * is above the watermark, the engine is asked for what follows the watermark: if it is the new process's, the
     * engine's copy comes that way (and proves the live stream the engine's, {@link SequenceTracker#vouched}).
     */
    private void unproven(long seq, byte[] payload) {
        owner.options().metrics().staleBatch();
        if (!tracker.isNew(seq)) {
            return;
        }
        owner.log()
                .once(
                        "unproven_live",
                        "skipping live batch seq " + u(seq) + ": after the engine restarted, it continues the old"
                                + " process's seqs and may be one of its batches still queued; asking the engine");
        tracker.unvouched(seq, payload);
        if (replay != null) {
            resumePending = true;
            resumeAt = System.nanoTime();
        }
    }

    /** One live message while an open-ended replay runs: kept for after it, its seq the replay's bound. */
    private void readBound() {
        List<byte[]> frames = sub.receiveNow();
        if (frames == null || !owner.delivery().wellFormed(frames)) {
            return;
        }
        firstLive = frames;
        liveBound = Frames.readSeq(frames.get(1));
        sub.wantRead(false); // the rest waits for the replay's end
    }

    private void applyLive(List<byte[]> frames) {
        long seq = Frames.readSeq(frames.get(1));
        if (!tracker.isNew(seq) || tracker.liveUnproven()) {
            // (unproven: the replay found a new process and asked it for everything after this message arrived, so
            // a batch of the new process with this seq would have come that way)
            owner.options().metrics().staleBatch();
            return;
        }
        applyBatch(seq, frames.get(2));
    }

    private void applyLive(long seq, KvEventBatch batch, byte[] payload) {
        if (!tracker.isNew(seq)) {
            owner.options().metrics().staleBatch();
            return;
        }
        deliver(seq, batch, payload);
    }

    /**
     * Hands the stream to a replay thread; the socket is left unread until it comes back. The listener is
     * {@code replaying} meanwhile (unless already degraded); a replay cut short by a stop leaves it so, for the
     * next attempt's catch-up to finish.
     */
    private void startReplay(String what, boolean announce, Runnable work) {
        replaying = true;
        announced = announce;
        // an open-ended replay is over only once the live message that bounded it is applied, on the poller
        boolean endsOnPoller = openEnded;
        Exactness exactness = owner.exactness();
        if (announce) {
            exactness.replayStarted(what);
        }
        threads.replay(() -> {
            try {
                work.run();
                if (heldLive != null && !stopped) {
                    applyLive(heldLive);
                }
            } catch (RuntimeException e) {
                owner.log().warn("replay failed: " + e);
                exactness.lost("replay failed: " + e, owner.delivery().ranks());
            } finally {
                heldLive = null;
                if (!stopped && !endsOnPoller && announce) {
                    exactness.replayEnded();
                }
                poller.submit(this, this::replayDone);
            }
        });
    }

    private void replayDone() {
        boolean endsHere = openEnded && announced;
        replaying = false;
        openEnded = false;
        List<byte[]> first = firstLive;
        firstLive = null;
        liveBound = ReplayClient.EVERYTHING;
        if (stopped) {
            finish();
            return;
        }
        if (first != null) {
            long seq = Frames.readSeq(first.get(1));
            if (Long.compareUnsigned(lostUntil, seq) >= 0 && !tracker.liveUnproven()) {
                tracker.settled(seq); // reported lost up to it: no second replay of the same range
            }
            handleLive(first); // classified against what the replay applied, as if it had just arrived
            lastLiveAt = System.nanoTime();
        }
        if (endsHere && !replaying) { // (a replay that message started ends it itself)
            owner.exactness().replayEnded();
        }
    }

    /** Closes the socket for good (once no replay holds the stream). */
    private void finish() {
        if (replaying || exited.isDone()) {
            return;
        }
        sub.close();
        open = false;
        poller.removed(this);
        exited.complete(null);
    }

    // ---- on the replay thread --------------------------------------------------------------------------

    /**
     * A catch-up on connect or after a reconnect. From a known watermark W the engine is asked from W itself: W (or
     * anything after it) coming back shows its seq did not go back, while its end marker alone shows that its newest
     * batch is older than W, so it restarted while no one listened (its cache is gone, whatever it published since
     * is in its buffer), and is handled as a live seq that went back is. An engine that buffers nothing answers the
     * same, and is treated the same: without a buffer nothing since W can be vouched for.
     */
    private void resume() {
        long last = owner.watermark().get();
        if (last == SequenceWatermark.UNSET) {
            owner.log().info("joining: asking " + replay.endpoint() + " for everything from seq 0");
            ReplayClient.Outcome outcome = replayOutcome(0, ReplayClient.EVERYTHING);
            if (outcome != null) {
                owner.options().metrics().replay(outcome.result(), outcome.recovered());
                if (outcome.empty() && !stopped) {
                    tracker.bufferFoundEmpty(); // it has published nothing this stream cannot see
                }
            }
            return;
        }
        owner.log()
                .info("resuming after seq " + u(last) + ": asking " + replay.endpoint() + " for everything from seq "
                        + u(last) + " (seq " + u(last) + " itself shows the engine did not restart)");
        ReplayClient.Outcome outcome;
        try {
            outcome = replay.resume(last, this);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (outcome == null) {
            return;
        }
        owner.options().metrics().replay(outcome.result(), outcome.recovered());
        if (stopped) {
            return;
        }
        if (outcome.otherProcess() != null) {
            // its seqs passed the watermark: no live seq read meanwhile would show the restart
            restartFoundByReplay(outcome.otherProcess() + ": the engine restarted while no one listened");
        } else if (outcome.empty() && liveBound == ReplayClient.EVERYTHING) {
            // (a live message read meanwhile is classified by the live rules: it shows whether the seq went back)
            restartFoundByReplay("seq went back below " + u(last) + " (applied up to " + u(last)
                    + "; the engine's replay holds" + " nothing from it): the engine restarted while no one listened");
        }
    }

    /**
     * The engine's replay shows a new process ({@code how}), as a live seq that went back does: its blocks are
     * dropped and it is asked for everything from seq 0. Whatever the live stream brings, that the engine's buffer
     * does not hold, is not applied until the stream shows it is the new process's (see {@link SequenceTracker}): a
     * restart without a reconnect leaves the old process's batches queued in the socket ahead of the new one's.
     */
    private void restartFoundByReplay(String how) {
        owner.log().info(how + "; dropping its blocks");
        tracker.restarted();
        if (heldLive != null) { // the live message this gap replay was for: the old process's, unless vouched for
            tracker.unvouched(Frames.readSeq(heldLive.get(1)), heldLive.get(2));
        }
        owner.delivery().publisherRestarted();
        announced = true; // (a tail check is announced from here on: its end ends this replay too, on the poller)
        owner.exactness().replayStarted("the engine restarted: catching up from seq 0");
        replayed(0, ReplayClient.EVERYTHING);
    }

    /** A gap after the watermark ({@link #askAfterWatermark}). */
    private void recover(long from, long until) {
        ReplayClient.Outcome outcome = askAfterWatermark(from, until);
        if (outcome == null) {
            return;
        }
        owner.options().metrics().replay(outcome.result(), outcome.recovered());
        if (outcome.otherProcess() != null && !stopped) {
            restartFoundByReplay(outcome.otherProcess());
        }
    }

    /**
     * Batches {@code [from, until)}, {@code from} being past the watermark. Asked for from the watermark itself when
     * {@code from} follows it and its batch is known: the engine may have restarted since the watermark's batch was
     * published, and then its batches of those seqs are another process's, which only the watermark's batch coming
     * back with other bytes tells ({@link ReplayClient.Outcome#otherProcess}).
     */
    private ReplayClient.Outcome askAfterWatermark(long from, long until) {
        long anchor = tracker.anchor();
        if (anchor == SequenceWatermark.UNSET || from != anchor + 1) {
            return replayOutcome(from, until);
        }
        try {
            return replay.resume(anchor, until, this);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** See the class comment: counted as a replay, and logged, only when the engine had sent more than arrived. */
    private void checkTail() {
        long from = owner.watermark().get() + 1;
        ReplayClient.Outcome outcome = askAfterWatermark(from, ReplayClient.EVERYTHING);
        if (outcome != null && outcome.otherProcess() != null && !stopped) {
            owner.options().metrics().replay(outcome.result(), outcome.recovered());
            restartFoundByReplay(outcome.otherProcess());
            return;
        }
        if (outcome == null || (outcome.recovered() == 0 && outcome.result() == IngestMetrics.ReplayResult.OK)) {
            return; // nothing followed: the usual answer (an engine that holds nothing from the watermark too)
        }
        owner.options().metrics().replay(outcome.result(), outcome.recovered());
        if (outcome.recovered() > 0) {
            owner.options().metrics().gapDetected(outcome.recovered());
            owner.log()
                    .info("the engine went quiet after seq " + u(from - 1) + "; it had published " + outcome.recovered()
                            + " more batches that did not arrive live (a PUB drops what its high-water mark cannot"
                            + " hold): replayed");
        }
    }

    private void replayed(long from, long until) {
        ReplayClient.Outcome outcome = replayOutcome(from, until);
        if (outcome != null) {
            owner.options().metrics().replay(outcome.result(), outcome.recovered());
        }
    }

    private ReplayClient.Outcome replayOutcome(long from, long until) {
        try {
            return replay.replay(from, until, this);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    @Override
    public boolean batch(long seq, byte[] payload) {
        tracker.vouched(seq, payload);
        if (!tracker.isNew(seq) || tracker.arrivedUndecodable(seq)) {
            return false; // (the same bytes as the live copy that did not decode: counted once, as it came)
        }
        threads.inflight().awaitRoom(() -> stopped); // a replay fills the writer's queue no faster than it drains
        if (stopped) {
            // the wait ended by the stop: a worker unregistered meanwhile must get no block after its removal (the
            // watermark stays, and the next attempt's catch-up asks for this batch again)
            return false;
        }
        return applyBatch(seq, payload);
    }

    @Override
    public boolean sameProcess(long seq, byte[] payload) {
        return tracker.sameProcess(seq, payload);
    }

    @Override
    public boolean firstPublished(long seq) {
        if (!tracker.firstPublished(seq)) {
            return false;
        }
        owner.log()
                .info("the engine's buffer begins at seq " + u(seq) + " and was empty when this stream joined: that is"
                        + " the first batch it published (a publisher whose seq starts at the clock), nothing before"
                        + " it is missing");
        return true;
    }

    @Override
    public long liveBound() {
        // a live message that may be the old process's bounds nothing of the new one's buffer
        return tracker.liveUnproven() ? ReplayClient.EVERYTHING : liveBound;
    }

    @Override
    public void lost(long from, long until, String problem) {
        if (stopped) {
            // the stream is going: the watermark stays, and the next attempt's catch-up asks for the same range and
            // finds out for itself (a registration that goes for good has its blocks dropped by the registry)
            return;
        }
        if (!announced && until == ReplayClient.EVERYTHING) {
            // a tail check the engine did not answer: it says nothing about a tail, and nothing showed one missing
            // (a live batch that comes after it is classified as usual: not settled, lostUntil is left as it is)
            owner.log()
                    .once("tail_check_unanswered", "a check for batches after a quiet spell got no answer: " + problem);
            return;
        }
        if (Long.compareUnsigned(until, lostUntil) > 0) {
            lostUntil = until;
        }
        if (tracker.onlyUndecodable(from, until)) {
            return; // those seqs did arrive, as payloads that do not decode: counted (and degraded) when skipped
        }
        boolean drop = tracker.anyApplied();
        if (!drop && tracker.afterRestart()) { // the restart dropped the blocks; its new process's first are gone
            problem = "the engine restarted and not all it published since can be vouched for: " + problem;
        } else if (!drop && from == 0) { // nothing applied yet and the engine's first batches are gone
            problem = "joined an engine that was already running: " + problem;
        }
        owner.exactness().lost(problem, owner.delivery().ranks());
        if (replay == null && !drop) {
            return; // nothing held from this stream, and no replay to report on: only counted
        }
        boolean unbounded = until == ReplayClient.EVERYTHING; // how many is not known
        owner.options().metrics().gapUnrecoverable(unbounded ? 0 : until - from);
        if (drop) {
            owner.delivery().dropUnverifiable();
            problem = problem + "; dropped the blocks of " + owner.log().workerName() + " ("
                    + (unbounded ? "batches from " + u(from) : u(tracker.notArrived(from, until)) + " batches")
                    + " lost), live events"
                    + " rebuild them";
        }
        owner.recordError(this, problem);
    }

    /**
     * Applies one batch, live or replayed; one that does not decode is remembered as such, so that a later gap
     * over it does not ask the engine for the same bytes again.
     */
    private boolean applyBatch(long seq, byte[] payload) {
        KvEventBatch batch = owner.delivery().decode(seq, payload);
        if (batch == null) {
            undecodable(seq);
            return false;
        }
        deliver(seq, batch, payload);
        return true;
    }

    private void deliver(long seq, KvEventBatch batch, byte[] payload) {
        owner.delivery().deliver(seq, batch, payload.length, owner.watermark());
        tracker.applied(seq, payload, batch.timestamp());
    }

    /** A new batch that did not decode: its events are lost to the index, so the listener is degraded. */
    private void undecodable(long seq) {
        owner.exactness()
                .lost(
                        "skipped batch seq " + u(seq) + ": it did not decode",
                        owner.delivery().ranks());
        tracker.undecodable(seq);
    }

    // ---- from any thread -------------------------------------------------------------------------------

    /**
     * Asks the poller to close the socket; with {@code await}, waits (at most {@link ListenerOptions#stopWait}) until it
     * has. False when it waited and the stream has not closed by then: a replay still holds it (one blocked in the
     * index, say), and it may yet apply what it has in hand, so a caller must not start another attempt of the same
     * stream beside it.
     */
    boolean stop(boolean await) {
        stopped = true;
        poller.submit(this, this::finish);
        if (!await || poller.onPollerThread()) {
            return true;
        }
        Duration wait = owner.options().stopWait();
        try {
            exited.get(wait.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (TimeoutException e) {
            owner.log()
                    .warn("the stream did not close within " + wait.toMillis() + " ms of its stop (a replay still"
                            + " holds it); it closes once that replay ends, and may apply the batch in its hands");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException e) {
            throw new IllegalStateException(e); // (never completed exceptionally)
        }
        return exited.isDone();
    }

    /** Completes once the stream has closed for good, after which it applies nothing. */
    CompletableFuture<Void> exited() {
        return exited.copy(); // no caller can complete it; its dependents run on the poller unless made async
    }

    /** Opened on its poller and not finished: its duties still run. */
    boolean isServed() {
        return open;
    }

    boolean isStopped() {
        return stopped;
    }

    private static String u(long v) {
        return Long.toUnsignedString(v);
    }
}
