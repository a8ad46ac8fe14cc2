package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.ingest.IngestMetrics.ReplayResult;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * The DEALER side of the engines' replay protocol: asks for everything from a seq and hands the answer over in
 * order (see {@code docs/compatibility.md}, "Sequence numbers and
 * replay"). The DEALER exists only while a replay runs.
 *
 * <p>An engine answers a request in one loop over its buffer, and its ROUTER drops what does not fit in the
 * client's queue (vLLM keeps ZeroMQ's default send high-water mark of 1,000 messages): a long answer arrives with
 * holes and maybe without its end marker. So a hole inside an answer is a cut stream, never a hole in the engine's
 * buffer: the client drops the DEALER (and the rest of that answer) and asks again from the next expected seq,
 * until the range is complete. Only the <em>first</em> reply to a request on a fresh DEALER cannot have been
 * dropped (the queue was empty), so only a request from X whose first reply is above X, or that gets no batch at
 * all, proves the engine no longer has X.
 *
 * <p>Bounded: one request reads at most {@link Settings#chunkBatches()} batches before the client asks again; the
 * DEALER's receive queue bounds what waits in memory; every request either moves the next expected seq on or ends
 * the replay (an engine that does not answer at all fails it). At most {@link ReplayPermits#limit()} replays run in the
 * process; after a replay fails the next one of this client waits a growing back-off.
 *
 * <p>A range that cannot be recovered is reported to {@link Target#lost} before any later batch is handed over,
 * so the caller can drop what it can no longer vouch for.
 */
final class ReplayClient {

    /** {@code until} of a replay of everything the engine has after a seq (no live seq bounds it yet). */
    static final long EVERYTHING = Frames.END_SEQ;

    /** Requests in a row that get no reply at all before a range is given up as gone from the engine. */
    static final int SILENT_ATTEMPTS = 3;

    /**
     * Silence inside an answer that ends it: the engine's loop is over and what did not fit was dropped. An engine
     * sends its whole answer in one tight loop, and the replies that fit reach us back to back, so a long gap (far
     * past what its ROUTER queues) is asked for in many short answers, each ended by this silence: it bounds how fast
     * a long gap is recovered (20,000 batches: 20 answers). Ended too early, an answer costs one more request from
     * the next expected seq, never a batch.
     */
    static final long ANSWER_IDLE_NANOS = 60_000_000L;

    /**
     * The default {@link Settings#pollMillis}: a wait for replies looks at its deadlines a few times within
     * {@link #ANSWER_IDLE_NANOS}.
     */
    static final int RECEIVE_POLL_MILLIS = 20;

    /** A request that came back to us (our own DEALER answered: nothing listens there yet) is asked again after this. */
    private static final long OWN_REQUEST_WAIT_NANOS = 100_000_000L;

    /**
     * Replies a DEALER queues unread (jeromq's default is 1,000). While a replay waits for the ingest budget, this is
     * what it holds in the heap; the engine's ROUTER drops what does not fit, and the client asks again from the next
     * seq, so a waiting replay backs up into the engine's queue and its buffer, not into ours.
     */
    static final int RECEIVE_QUEUE = 64;

    /**
     * A replay's first handshake deadline is this share of the configured one, and each retry doubles it up to that.
     * A jeromq stall never recovers (a few percent of fresh DEALERs; JeromqHandshakeBench), and a healthy handshake
     * takes milliseconds, so waiting the full deadline first only delays the replay; the doubling keeps a loaded
     * machine whose handshakes are slow from reconnecting over and over.
     */
    static final int FIRST_HANDSHAKE_SHARE = 8;

    /**
     * @param timeout      longest wait for the next reply
     * @param chunkBatches batches one request may return before the client asks again from the next seq
     * @param maxResumes   for a replay of everything after a seq: answers in a row that ended with more batches,
     *                     after which the live stream is left to show whatever is still missing
     * @param backoffMin   first wait after a failed replay; doubles per failure up to {@code backoffMax}
     * @param handshake    how long a fresh DEALER may take to finish its ZMTP handshake
     * @param pollMillis   how long one wait for a reply blocks before the client looks at its deadlines again
     */
    record Settings(
            Duration timeout,
            int chunkBatches,
            int maxResumes,
            Duration backoffMin,
            Duration backoffMax,
            ReplayPermits permits,
            Duration handshake,
            int pollMillis) {}

    /** Where replayed batches go. */
    interface Target {

        /** One replayed batch, in seq order; true when it was applied (not stale, decoded). */
        boolean batch(long seq, byte[] payload);

        /**
         * For a {@link #resume}: whether its first reply, batch {@code seq}, comes from the process whose batch the
         * anchor is (the same bytes at the anchor's seq); true when nothing tells.
         */
        default boolean sameProcess(long seq, byte[] payload) {
            return true;
        }

        /** {@code [from, until)} cannot be recovered; {@code problem} says why. */
        void lost(long from, long until, String problem);

        /**
         * Whether the engine's buffer, beginning at {@code seq} (the first reply to a request from below it), shows
         * that batch to be the first its process published, so that nothing below it is missing; false when nothing
         * tells (then the range below it is {@link #lost}).
         */
        default boolean firstPublished(long seq) {
            return false;
        }

        /**
         * For a replay of {@link #EVERYTHING} after a seq: the first live seq that arrived since it began, which
         * bounds it (the live stream holds that batch and what follows it); {@link #EVERYTHING} while none has.
         */
        long liveBound();
    }

    /**
     * How a replay ended, how many batches it applied, and how many requests it took; {@code empty}: the engine
     * answered with its end marker alone, so it holds nothing at or after the seq the replay began from;
     * {@code otherProcess}: a resume's first reply came from another engine process than the anchor (why), and the
     * replay stopped there (null otherwise).
     */
    record Outcome(ReplayResult result, long recovered, int requests, boolean empty, String otherProcess) {

        Outcome(ReplayResult result, long recovered, int requests) {
            this(result, recovered, requests, false, null);
        }
    }

    /** What one request's answer came to. */
    private enum End {
        /** the end marker arrived */
        END_MARKER,
        /** a resume's first reply is another process's ({@link Target#sameProcess}) */
        OTHER_PROCESS,
        /** a reply above the next expected seq: the ROUTER dropped replies (a cut stream) */
        CUT,
        /** the chunk is read; ask again for the rest */
        CHUNK_FULL,
        /**
         * a bounded range is complete and nothing more came within the poll interval, or the first reply lies past
         * the range (what is missing of it was reported lost; the live stream holds the rest)
         */
        COMPLETE,
        TIMEOUT,
        FAILED,
        STOPPED
    }

    private final ZContext context;
    private final String endpoint;
    private final Settings settings;
    private final int handshakeMillis;
    private final int pollMillis;
    private final BooleanSupplier stopped;
    private final Runnable onHandshakeRetry;
    private ZMQ.Socket dealer;
    private HandshakeWatch watch;
    /** this replay's handshake deadline for the next fresh DEALER */
    private long handshakeNanos;

    private long backoffNanos;
    private long notBefore = System.nanoTime();

    ReplayClient(
            ZContext context, String endpoint, Settings settings, BooleanSupplier stopped, Runnable onHandshakeRetry) {
        this.context = context;
        this.endpoint = endpoint;
        this.settings = settings;
        this.handshakeMillis = (int) settings.handshake().toMillis();
        this.pollMillis = settings.pollMillis();
        this.stopped = stopped;
        this.onHandshakeRetry = onHandshakeRetry;
    }

    String endpoint() {
        return endpoint;
    }

    /**
     * Fills {@code [from, until)} ({@code until} = {@link #EVERYTHING}: all the engine has from {@code from}, up to
     * the target's {@link Target#liveBound} once there is one); batches at and after {@code until} that come along in
     * order are handed over too. Null when stopped before it ended.
     */
    Outcome replay(long from, long until, Target target) throws InterruptedException {
        return replay(new Answer(target, from, false, stopped), until);
    }

    /**
     * Everything the engine has after {@code last}, a seq the target already holds, asked for from {@code last}
     * itself: an engine answers a request from every buffered batch at or after it, so {@code last} coming back (or
     * anything after it) shows the engine's seq did not go back below it, while an answer of the end marker alone
     * ({@link Outcome#empty}) shows that the engine's newest batch is older than {@code last}, or that it buffers
     * nothing. {@code last} is handed over like any batch (the target skips it as stale) and is never reported lost.
     */
    Outcome resume(long last, Target target) throws InterruptedException {
        return resume(last, EVERYTHING, target);
    }

    /**
     * As {@link #resume(long, Target)}, for {@code [last + 1, until)}: a gap after {@code last} asked for from
     * {@code last} itself, so that an engine that restarted since is found by its first reply ({@link
     * Outcome#otherProcess}) before any batch of the new process is handed over as the old one's.
     */
    Outcome resume(long last, long until, Target target) throws InterruptedException {
        return replay(new Answer(target, last, true, stopped), until);
    }

    private Outcome replay(Answer answer, long until) throws InterruptedException {
        if (!awaitBackoff()) {
            return null;
        }
        // an open-ended replay whose live stream, read while it waits for a permit, begins at `from` needs none
        // (the usual end of a tail check when replays queue: a fleet's engines all went quiet, then busy again)
        if (!settings.permits()
                .acquire(() -> stopped.getAsBoolean() || reached(answer.needed(), limit(until, answer.target)))) {
            return stopped.getAsBoolean() ? null : new Outcome(ReplayResult.OK, 0, 0);
        }
        try {
            return run(answer, until);
        } finally {
            close();
            settings.permits().release();
        }
    }

    private Outcome run(Answer answer, long until) {
        Target target = answer.target;
        long from = answer.expected;
        handshakeNanos = Math.max(1, handshakeMillis * 1_000_000L / FIRST_HANDSHAKE_SHARE);
        int stalls = 0;
        int silent = 0;
        while (true) {
            if (covered(until, answer)) {
                return succeeded(answer); // an open-ended replay whose live stream began where it got to
            }
            String error = openFresh();
            if (error != null) {
                answer.lose(answer.needed(), limit(until, target), error);
                return failed(ReplayResult.FAILED, answer);
            }
            long asked = answer.expected;
            // what the request asked for: a live bound that arrives later says nothing about this answer
            long askedUntil = limit(until, target);
            End end = request(asked, until, answer);
            long limit = limit(until, target); // read once: a live bound may arrive meanwhile
            boolean rangeDone = reached(answer.expected, limit);
            switch (end) {
                case STOPPED -> {
                    return null;
                }
                case COMPLETE -> {
                    return succeeded(answer);
                }
                case OTHER_PROCESS -> {
                    backoffNanos = 0;
                    return new Outcome(ReplayResult.OK, answer.recovered, answer.requests, false, answer.otherProcess);
                }
                case END_MARKER -> {
                    if (answer.requestSawNone) {
                        // nothing at or after `asked` in the engine's buffer when it answered; batches it published
                        // after that (below a live bound that came later) are the next gap's, not lost here
                        long needed = answer.needed(); // (a resume's anchor is held, not needed)
                        if (askedUntil != EVERYTHING && Long.compareUnsigned(needed, askedUntil) < 0) {
                            answer.lose(
                                    needed,
                                    askedUntil,
                                    "replay incomplete: engine returned nothing from " + u(asked) + ", needed up to "
                                            + u(askedUntil - 1));
                        }
                        // nothing at all since `from`: the engine holds nothing at or after it (see resume)
                        return succeeded(answer, asked == from);
                    }
                    if (answer.tookOnlyAnchor(asked) && askedUntil == EVERYTHING) {
                        return succeeded(answer); // a resume's anchor, and nothing after it: as idle as can be
                    }
                    if (rangeDone || (limit == EVERYTHING && ++stalls > settings.maxResumes())) {
                        return succeeded(answer); // (an engine publishing all along: the live stream has the rest)
                    }
                    // the tail of the answer may have been dropped before the end marker fitted: ask again
                }
                case CUT, CHUNK_FULL -> {
                    if (rangeDone) {
                        // cut past the gap: the live stream holds the rest. Asked again, an engine whose buffer moved
                        // on would answer above the next expected seq, which past the range proves nothing lost
                        return succeeded(answer);
                    }
                    stalls = 0;
                    silent = 0;
                }
                case TIMEOUT -> {
                    // after progress, silence means the ROUTER's loop is over and dropped the rest: ask again.
                    // Silence from the start proves nothing either (a busy engine, or a fresh connection that
                    // jeromq left stalled): ask again on a fresh DEALER before giving the range up.
                    if (answer.requestSawNone && ++silent < SILENT_ATTEMPTS) {
                        continue;
                    }
                    if (answer.requestSawNone) {
                        answer.lose(
                                answer.needed(),
                                limit,
                                "replay from " + u(answer.needed()) + " timed out " + SILENT_ATTEMPTS
                                        + " times after " + settings.timeout().toMillis() + " ms: no answer from "
                                        + endpoint);
                        return failed(ReplayResult.TIMEOUT, answer);
                    }
                    if (rangeDone) {
                        return succeeded(answer);
                    }
                }
                case FAILED -> {
                    answer.lose(answer.needed(), limit, answer.failure);
                    return failed(ReplayResult.FAILED, answer);
                }
            }
        }
    }

    /** {@code until}, or for an open-ended replay the target's live bound once it has one. */
    private static long limit(long until, Target target) {
        return until != EVERYTHING ? until : target.liveBound();
    }

    /** The replay has reached its limit: what follows is the live stream's. */
    private static boolean covered(long until, Answer answer) {
        return reached(answer.needed(), limit(until, answer.target));
    }

    /** The next expected seq, {@code expected}, is at or past {@code limit} (never for {@link #EVERYTHING}). */
    private static boolean reached(long expected, long limit) {
        return limit != EVERYTHING && Long.compareUnsigned(expected, limit) >= 0;
    }

    private Outcome succeeded(Answer answer) {
        return succeeded(answer, false);
    }

    private Outcome succeeded(Answer answer, boolean empty) {
        if (answer.lostAny) {
            return new Outcome(ReplayResult.INCOMPLETE, answer.recovered, answer.requests);
        }
        backoffNanos = 0;
        return new Outcome(ReplayResult.OK, answer.recovered, answer.requests, empty, null);
    }

    private Outcome failed(ReplayResult result, Answer answer) {
        long min = settings.backoffMin().toNanos();
        backoffNanos = backoffNanos == 0
                ? min
                : Math.min(backoffNanos * 2, settings.backoffMax().toNanos());
        notBefore = System.nanoTime() + backoffNanos;
        return new Outcome(result, answer.recovered, answer.requests);
    }

    private boolean awaitBackoff() throws InterruptedException {
        while (System.nanoTime() - notBefore < 0) {
            if (stopped.getAsBoolean()) {
                return false;
            }
            Thread.sleep(Math.min(100, Math.max(1, (notBefore - System.nanoTime()) / 1_000_000)));
        }
        return !stopped.getAsBoolean();
    }

    /**
     * A new DEALER (a new identity, so nothing of an earlier answer can reach it); null when it worked, else the
     * error. A handshake that never came ({@link HandshakeWatch}) is the other reason to make one.
     */
    private String openFresh() {
        close();
        try {
            dealer = context.createSocket(SocketType.DEALER);
            Frames.configureClient(dealer, endpoint, 2 * handshakeMillis, pollMillis); // the watch acts first
            dealer.setRcvHWM(RECEIVE_QUEUE);
            // a DEALER blocks a send until a connection is up: wait for it, but no longer than for a reply
            dealer.setSendTimeOut(
                    (int) Math.min(Integer.MAX_VALUE, settings.timeout().toMillis()));
            watch = HandshakeWatch.attach(dealer, handshakeNanos);
            dealer.connect(endpoint);
            return null;
        } catch (RuntimeException e) {
            close();
            return "failed to connect ZMQ DEALER socket to " + endpoint + ": "
                    + (e.getMessage() != null ? e.getMessage() : e.toString());
        }
    }

    /** Sends one request from {@code from} and reads its answer into {@code answer}. */
    private End request(long from, long until, Answer answer) {
        answer.startRequest();
        if (!Frames.send(dealer, Frames.EMPTY, Frames.seqBytes(from))) {
            answer.failure = "replay request to " + endpoint + " could not be sent";
            return End.FAILED;
        }
        long timeoutNanos = settings.timeout().toNanos();
        long deadline = System.nanoTime() + timeoutNanos;
        int read = 0;
        while (true) {
            if (stopped.getAsBoolean()) {
                return End.STOPPED;
            }
            List<byte[]> reply;
            try {
                reply = Frames.receive(dealer);
            } catch (ZMQException e) {
                if (stopped.getAsBoolean()) {
                    return End.STOPPED;
                }
                answer.failure = "replay from " + u(from) + " failed: " + e.getMessage();
                return End.FAILED;
            }
            if (reply == null) {
                if (covered(until, answer)) {
                    return End.COMPLETE; // the live stream holds the rest; a missing end marker costs one poll
                }
                long now = System.nanoTime();
                if (!watch.handshaken()) {
                    // the request cannot have reached the engine yet: the timeout is for the engine's answer
                    if (watch.stalled()) {
                        handshakeNanos = Math.min(2 * handshakeNanos, handshakeMillis * 1_000_000L);
                        if (!askAgain(from, answer)) {
                            return End.FAILED;
                        }
                        onHandshakeRetry.run();
                        deadline = now + timeoutNanos;
                        continue;
                    }
                    if (now - deadline < 2L * handshakeMillis * 1_000_000L) {
                        continue;
                    }
                }
                if (now - deadline > 0) {
                    return End.TIMEOUT;
                }
                continue;
            }
            if (isOwnRequest(reply, from)) {
                // nothing listens there yet: wait as for a connection that does not come up, not on the port
                close();
                LockSupport.parkNanos(OWN_REQUEST_WAIT_NANOS);
                if (!askAgain(from, answer)) {
                    return End.FAILED;
                }
                continue;
            }
            int seqAt;
            if (reply.size() == 3) {
                seqAt = 1; // ["", seq, payload] (vLLM <= 0.25, SGLang)
            } else if (reply.size() == 4) {
                seqAt = 2; // ["", topic, seq, payload] (vLLM >= 0.26)
            } else {
                answer.failure =
                        "replay from " + u(from) + " stopped: a reply of " + reply.size() + " frames; expected 3 or 4";
                return End.FAILED;
            }
            byte[] payload = reply.get(seqAt + 1);
            if (payload.length == 0) {
                return End.END_MARKER; // seq ff x 8
            }
            byte[] seqFrame = reply.get(seqAt);
            if (seqFrame.length != 8) {
                answer.failure = "replay from " + u(from) + " stopped: a reply whose seq frame has " + seqFrame.length
                        + " bytes";
                return End.FAILED;
            }
            long seq = Frames.readSeq(seqFrame);
            if (seq == Frames.END_SEQ) {
                // the end marker's seq, whatever the payload: no batch has it (and taken, it would set the watermark
                // to the value that means unset)
                return End.END_MARKER;
            }
            if (answer.anchored
                    && from == answer.anchor
                    && answer.requestSawNone
                    && Long.compareUnsigned(seq, from) >= 0
                    && !answer.target.sameProcess(seq, payload)) {
                answer.otherProcess = seq == from
                        ? "the engine's replay of seq " + u(seq) + " is not the batch applied at that seq"
                        : "the engine's replay from seq " + u(from) + " begins at " + u(seq)
                                + ", past the clock time of the batch applied at " + u(from)
                                + " (a publisher whose seq starts at the clock)";
                return End.OTHER_PROCESS;
            }
            if (Long.compareUnsigned(seq, answer.expected) < 0) {
                // not asked for (an engine answers from the requested seq on): no progress, so the wait goes on
                // as it was; an engine that sends nothing else times out as one that sends nothing
                if (System.nanoTime() - deadline > 0) {
                    return End.TIMEOUT;
                }
                continue;
            }
            if (seq != answer.expected) {
                if (!answer.requestSawNone) {
                    return End.CUT; // replies between were dropped by the ROUTER, not missing from the buffer
                }
                // the first reply on a fresh DEALER: the engine's buffer no longer reaches back to `expected`
                long limit = limit(until, answer.target);
                long lostUntil = Long.compareUnsigned(seq, limit) < 0 ? seq : limit;
                long needed = answer.needed();
                if (Long.compareUnsigned(needed, lostUntil) < 0
                        && !(lostUntil == seq && answer.target.firstPublished(seq))) {
                    answer.lose(
                            needed,
                            lostUntil,
                            "replay incomplete: engine buffer starts at " + u(seq) + ", requested " + u(needed));
                }
                if (limit != EVERYTHING && Long.compareUnsigned(seq, limit) > 0) {
                    // past the range: the live stream holds [limit, seq) and goes on from there. Taken, this batch
                    // would make those look applied, and they would be skipped as stale
                    return End.COMPLETE;
                }
            }
            // an engine sends its whole answer in one loop: once it has begun, a pause means the rest was dropped.
            // Only a batch taken moves the wait: stale replies would keep it alive for as long as they come
            deadline = System.nanoTime() + Math.min(timeoutNanos, ANSWER_IDLE_NANOS);
            boolean anchor = answer.anchored && seq == answer.anchor; // held already: no part of a chunk
            answer.take(seq, payload);
            if (!anchor && ++read >= settings.chunkBatches() && !covered(until, answer)) {
                return End.CHUNK_FULL;
            }
        }
    }

    /** The same request again on a fresh DEALER; false (and the failure noted) when it could not be sent. */
    private boolean askAgain(long from, Answer answer) {
        if (openFresh() != null || !Frames.send(dealer, Frames.EMPTY, Frames.seqBytes(from))) {
            answer.failure = "replay request to " + endpoint + " could not be sent";
            return false;
        }
        return true;
    }

    /**
     * A DEALER that connects to a free port of this host can be given that port as its own and reach itself (TCP's
     * simultaneous open; DEALER to DEALER is a valid ZeroMQ pair): it then reads its own request back.
     */
    static boolean isOwnRequest(List<byte[]> reply, long from) {
        return reply.size() == 2 && reply.get(0).length == 0 && Arrays.equals(reply.get(1), Frames.seqBytes(from));
    }

    /** Drops the DEALER, if any (linger 0: whatever it still holds is gone). */
    void close() {
        if (watch != null) {
            watch.detach();
            watch = null;
        }
        Frames.closeQuietly(dealer);
        dealer = null;
    }

    private static String u(long v) {
        return Long.toUnsignedString(v);
    }

    /** The progress of one replay across its requests. */
    private static final class Answer {
        final Target target;
        /** a {@link #resume}: the first seq asked for is held already (asked for only to see whether it is there) */
        final boolean anchored;

        final long anchor;
        /** once true, nothing is reported lost: the replay's owner stopped, and the next attempt asks again */
        final BooleanSupplier stopped;

        long expected;
        boolean requestSawNone;
        boolean lostAny;
        long recovered;
        int requests;
        String failure;
        /** why the first reply to a resume shows another engine process; null while none does */
        String otherProcess;

        Answer(Target target, long from, boolean anchored, BooleanSupplier stopped) {
            this.target = target;
            this.stopped = stopped;
            this.expected = from;
            this.anchored = anchored;
            this.anchor = from;
        }

        /** This request, from {@code asked}, brought a resume's anchor and nothing else. */
        boolean tookOnlyAnchor(long asked) {
            return anchored && asked == anchor && expected == anchor + 1;
        }

        /** The first seq the target still needs: the next expected one, or the one after a resume's anchor. */
        long needed() {
            return anchored && expected == anchor ? anchor + 1 : expected;
        }

        void startRequest() {
            requestSawNone = true;
            requests++;
        }

        void take(long seq, byte[] payload) {
            requestSawNone = false;
            expected = seq + 1;
            if (target.batch(seq, payload)) {
                recovered++;
            }
        }

        void lose(long from, long until, String problem) {
            if (Long.compareUnsigned(from, until) >= 0 || stopped.getAsBoolean()) {
                return; // (a reply read just as the stop came: a loss it shows is the next attempt's to find)
            }
            lostAny = true;
            target.lost(from, until, problem);
        }
    }
}
