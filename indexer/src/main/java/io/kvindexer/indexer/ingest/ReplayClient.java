package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.ingest.IngestMetrics.ReplayResult;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * The DEALER side of the engines' replay protocol: asks for everything from a seq and hands the answer over in
 * order until the end marker (see {@code docs/compatibility.md}, "Sequence numbers and
 * replay").
 *
 * <p>Bounded and resumable: one request reads at most {@link Settings#chunkBatches()} batches short of the
 * range's end, then the DEALER is recreated (the rest of that answer is dropped) and the next request starts at
 * the next expected seq; an answer that stops part way (a timeout after progress) is resumed the same way up to
 * {@link Settings#maxResumes()} times. At most {@link ReplayPermits#limit()} replays run in the process;
 * after a replay fails the next one of this client waits a growing back-off.
 *
 * <p>A range that cannot be recovered is reported to {@link Target#lost} before any later batch is handed over,
 * so the caller can drop what it can no longer vouch for. A fresh DEALER after every failure makes sure a late or
 * partial answer is never read as part of the next replay.
 */
final class ReplayClient implements AutoCloseable {

    /**
     * @param timeout      longest wait for the next reply
     * @param chunkBatches batches one request may return before the client asks again from the next seq
     * @param maxResumes   requests after an interrupted answer, per replay
     * @param backoffMin   first wait after a failed replay; doubles per failure up to {@code backoffMax}
     */
    record Settings(
            Duration timeout,
            int chunkBatches,
            int maxResumes,
            Duration backoffMin,
            Duration backoffMax,
            ReplayPermits permits) {}

    /** Where replayed batches go. */
    interface Target {

        /** One replayed batch, in seq order; true when it was applied (not stale, decoded). */
        boolean batch(long seq, byte[] payload);

        /** {@code [from, until)} cannot be recovered; {@code problem} says why. */
        void lost(long from, long until, String problem);
    }

    /** How a replay ended and how many batches it applied. */
    record Outcome(ReplayResult result, long recovered) {}

    /** What one request's answer came to. */
    private enum End {
        END_MARKER,
        CHUNK_FULL,
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
    private long backoffNanos;
    private long notBefore = System.nanoTime();

    ReplayClient(
            ZContext context,
            String endpoint,
            Settings settings,
            int handshakeMillis,
            int pollMillis,
            BooleanSupplier stopped,
            Runnable onHandshakeRetry) {
        this.context = context;
        this.endpoint = endpoint;
        this.settings = settings;
        this.handshakeMillis = handshakeMillis;
        this.pollMillis = pollMillis;
        this.stopped = stopped;
        this.onHandshakeRetry = onHandshakeRetry;
    }

    String endpoint() {
        return endpoint;
    }

    /** Creates and connects the DEALER; null when it worked, else the error. */
    String open() {
        return open(false);
    }

    /** Like {@link #open()}; {@code replace} first closes the DEALER in use (a handshake that never came). */
    private String open(boolean replace) {
        if (replace) {
            Frames.closeQuietly(dealer);
            onHandshakeRetry.run();
        }
        try {
            dealer = context.createSocket(SocketType.DEALER);
            Frames.configureClient(dealer, endpoint, 2 * handshakeMillis, pollMillis); // the watch acts first
            // a DEALER blocks a send until a connection is up: wait for it, but no longer than for a reply
            dealer.setSendTimeOut(
                    (int) Math.min(Integer.MAX_VALUE, settings.timeout().toMillis()));
            watch = HandshakeWatch.attach(dealer, handshakeMillis * 1_000_000L);
            dealer.connect(endpoint);
            return null;
        } catch (RuntimeException e) {
            Frames.closeQuietly(dealer);
            dealer = null;
            return "failed to connect ZMQ DEALER socket to " + endpoint + ": "
                    + (e.getMessage() != null ? e.getMessage() : e.toString());
        }
    }

    /**
     * Fills {@code [from, until)}; batches at and after {@code until} that the engine sends along are handed over
     * too. Null when stopped before it ended, or when the DEALER could not be recreated (then {@code lost} has
     * said so and the caller should give up on replay).
     */
    Outcome replay(long from, long until, Target target) throws InterruptedException {
        if (!awaitBackoff() || !settings.permits().acquire(stopped)) {
            return null;
        }
        try {
            return run(from, until, target);
        } finally {
            settings.permits().release();
        }
    }

    private Outcome run(long from, long until, Target target) {
        Answer answer = new Answer(target);
        long next = from;
        int resumes = 0;
        while (true) {
            End end = request(next, until, answer);
            switch (end) {
                case STOPPED -> {
                    return null;
                }
                case END_MARKER -> {
                    if (answer.requestSawNone) {
                        answer.lose(
                                next,
                                until,
                                "replay incomplete: engine returned nothing from " + u(next) + ", needed up to "
                                        + u(until - 1));
                    } else if (Long.compareUnsigned(answer.expected, until) < 0) {
                        answer.lose(
                                answer.expected,
                                until,
                                "replay incomplete: engine returned up to " + u(answer.expected - 1) + ", needed up to "
                                        + u(until - 1));
                    }
                    return succeeded(answer);
                }
                case CHUNK_FULL -> {
                    next = answer.expected;
                    if (!fresh(answer, next, until)) {
                        return failed(ReplayResult.FAILED, answer);
                    }
                }
                case TIMEOUT -> {
                    if (answer.requestSawNone || resumes == settings.maxResumes()) {
                        long at = answer.any ? answer.expected : next;
                        answer.lose(
                                at,
                                until,
                                "replay from " + u(at) + " timed out after "
                                        + settings.timeout().toMillis() + " ms: no answer from " + endpoint);
                        fresh(answer, at, until);
                        return failed(ReplayResult.TIMEOUT, answer);
                    }
                    // the answer stopped part way: ask again from the next expected seq
                    resumes++;
                    next = answer.expected;
                    if (!fresh(answer, next, until)) {
                        return failed(ReplayResult.FAILED, answer);
                    }
                }
                case FAILED -> {
                    answer.lose(answer.any ? answer.expected : next, until, answer.failure);
                    fresh(answer, next, until);
                    return failed(ReplayResult.FAILED, answer);
                }
            }
        }
    }

    private Outcome succeeded(Answer answer) {
        if (answer.lostAny) {
            return new Outcome(ReplayResult.INCOMPLETE, answer.recovered);
        }
        backoffNanos = 0;
        return new Outcome(ReplayResult.OK, answer.recovered);
    }

    private Outcome failed(ReplayResult result, Answer answer) {
        long min = settings.backoffMin().toNanos();
        backoffNanos = backoffNanos == 0
                ? min
                : Math.min(backoffNanos * 2, settings.backoffMax().toNanos());
        notBefore = System.nanoTime() + backoffNanos;
        return new Outcome(result, answer.recovered);
    }

    /** A new DEALER; false (and the range reported lost) when it cannot be made. */
    private boolean fresh(Answer answer, long next, long until) {
        Frames.closeQuietly(dealer);
        dealer = null;
        String error = open();
        if (error != null) {
            answer.lose(next, until, error);
            return false;
        }
        return true;
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

    /** Sends one request from {@code from} and reads its answer into {@code answer}. */
    private End request(long from, long until, Answer answer) {
        answer.startRequest(from);
        if (dealer != null && watch.stalled() && open(true) != null) {
            dealer = null;
        }
        if (dealer == null || !Frames.send(dealer, Frames.EMPTY, Frames.seqBytes(from))) {
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
                long now = System.nanoTime();
                if (!watch.handshaken()) {
                    // the request cannot have reached the engine yet: the timeout is for the engine's answer
                    if (watch.stalled()) {
                        if (open(true) != null || !Frames.send(dealer, Frames.EMPTY, Frames.seqBytes(from))) {
                            answer.failure = "replay request to " + endpoint + " could not be sent";
                            return End.FAILED;
                        }
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
            deadline = System.nanoTime() + timeoutNanos;
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
            // seqs from `until` on are the live stream's business (the SUB queue holds what was sent live)
            long lostUntil = Long.compareUnsigned(seq, until) < 0 ? seq : until;
            if (answer.requestSawNone && Long.compareUnsigned(seq, from) > 0) {
                // the engine's buffer no longer reaches back to `from`: those batches are gone for good
                answer.lose(
                        from,
                        lostUntil,
                        "replay incomplete: engine buffer starts at " + u(seq) + ", requested " + u(from));
            } else if (!answer.requestSawNone
                    && seq != answer.expected
                    && Long.compareUnsigned(answer.expected, until) < 0) {
                // the engine skipped seqs inside its buffer: they were never there to be replayed
                answer.lose(
                        answer.expected,
                        lostUntil,
                        "replay incomplete: batches " + u(answer.expected) + ".." + u(lostUntil - 1)
                                + " are missing from the engine buffer");
            }
            answer.take(seq, payload);
            read++;
            if (read >= settings.chunkBatches() && Long.compareUnsigned(answer.expected, until) < 0) {
                return End.CHUNK_FULL;
            }
        }
    }

    @Override
    public void close() {
        Frames.closeQuietly(dealer);
        dealer = null;
    }

    private static String u(long v) {
        return Long.toUnsignedString(v);
    }

    /** The progress of one replay across its requests. */
    private static final class Answer {
        final Target target;
        long expected;
        boolean any;
        boolean requestSawNone;
        boolean lostAny;
        long recovered;
        String failure;

        Answer(Target target) {
            this.target = target;
        }

        void startRequest(long from) {
            requestSawNone = true;
            if (!any) {
                expected = from;
            }
        }

        void take(long seq, byte[] payload) {
            requestSawNone = false;
            any = true;
            expected = seq + 1;
            if (target.batch(seq, payload)) {
                recovered++;
            }
        }

        void lose(long from, long until, String problem) {
            lostAny = true;
            target.lost(from, until, problem);
        }
    }
}
