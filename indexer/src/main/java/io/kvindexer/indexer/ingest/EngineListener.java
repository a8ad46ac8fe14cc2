package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.event.EngineEventDecoder;
import io.kvindexer.indexer.event.EventDecodeException;
import io.kvindexer.indexer.event.KvEventBatch;
import io.kvindexer.indexer.model.WorkerKey;
import io.kvindexer.indexer.ingest.IngestMetrics.ReplayResult;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Receives one registration's engine KV-event stream: a SUB socket on the engine's PUB endpoint, the
 * sequence watermark, gap detection and replay over a DEALER socket (behaviour spec §2–§3, §5.5, with the
 * fixes of design §2).
 *
 * <p>Threading: each attempt (start, and every resume) runs on its own daemon thread, which owns both sockets
 * and does everything in one loop: live messages, replays, applying to the sink. Replay therefore happens
 * synchronously inside the loop, and live messages that arrive meanwhile wait in the SUB queue (receive HWM
 * one million messages) and are applied after the replayed batches, so a live {@code Removed(A)} is never
 * overtaken by a replayed {@code Stored(A)}.
 *
 * <p>Sequence rules (the watermark is the caller's and outlives this listener):
 * <ul>
 *   <li>watermark unset and seq &gt; 0: replay {@code [0, seq)} first (slow joiner / re-registration);</li>
 *   <li>seq &gt; watermark + 1: gap, replay {@code [watermark + 1, seq)};</li>
 *   <li>publisher restart: the live stream of one engine process only goes up, so a live seq that is not
 *       above the previous live seq of this attempt means a new engine process. On the first live message of
 *       an attempt (no previous live seq yet, e.g. after re-registration) a seq strictly below the watermark
 *       means the same. Then {@link BatchSink#publisherRestarted} is called for the registered rank and every
 *       rank seen through batch overrides, the watermark is reset and the message is handled like a first
 *       one (replay from 0 when seq &gt; 0);</li>
 *   <li>otherwise a seq not above the watermark (a duplicate, or a batch a replay already applied) is
 *       skipped;</li>
 *   <li>the watermark advances only when a batch decodes and is applied.</li>
 * </ul>
 *
 * <p>Replay outcome: an engine buffer that no longer reaches back to the requested seq (or skipped seqs, or
 * an answer that stops short) is recorded in {@code last_error} and counted; the batches it did return are
 * applied and the index is otherwise kept as it is (it converges as the engine stores and evicts again; a
 * full clear would throw away far more correct state than the lost batches can have changed). A ROUTER that
 * does not answer within {@link Options#replayTimeout()} is recorded the same way and the listener goes on
 * with live messages; its DEALER is recreated so a late answer cannot be mistaken for the next one.
 */
public final class EngineListener implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(EngineListener.class.getName());
    private static final byte[] EMPTY = new byte[0];
    private static final int POLL_MILLIS = 100;

    /**
     * @param context          the ZeroMQ context the sockets are made from
     * @param replayTimeout    longest wait for the next replay reply before giving up on a replay
     * @param handshakeTimeout a connection whose ZMTP handshake takes longer is dropped and retried
     * @param receiveHwm       SUB receive high-water mark, in messages
     */
    public record Options(ZContext context, Duration replayTimeout, Duration handshakeTimeout, int receiveHwm,
                          EngineEventDecoder decoder, IngestMetrics metrics) {

        public Options {
            Objects.requireNonNull(context, "context");
            Objects.requireNonNull(replayTimeout, "replayTimeout");
            Objects.requireNonNull(handshakeTimeout, "handshakeTimeout");
            Objects.requireNonNull(decoder, "decoder");
            Objects.requireNonNull(metrics, "metrics");
        }

        public static Options defaults() {
            return new Options(ZmqContext.shared(), Duration.ofSeconds(2), Duration.ofSeconds(2), 1_000_000,
                    new EngineEventDecoder(), IngestMetrics.NOOP);
        }

        public Options withContext(ZContext v) {
            return new Options(v, replayTimeout, handshakeTimeout, receiveHwm, decoder, metrics);
        }

        public Options withReplayTimeout(Duration v) {
            return new Options(context, v, handshakeTimeout, receiveHwm, decoder, metrics);
        }

        public Options withHandshakeTimeout(Duration v) {
            return new Options(context, replayTimeout, v, receiveHwm, decoder, metrics);
        }

        public Options withMetrics(IngestMetrics v) {
            return new Options(context, replayTimeout, handshakeTimeout, receiveHwm, decoder, v);
        }
    }

    private final ListenerSpec spec;
    private final SequenceWatermark watermark;
    private final BatchSink sink;
    private final ReadyGate gate;
    private final Options options;
    private final IngestMetrics metrics;
    private final Set<String> loggedOnce = ConcurrentHashMap.newKeySet();
    /** Effective ranks this listener has applied batches for (registered rank plus batch overrides). */
    private final Set<Integer> ranksSeen = ConcurrentHashMap.newKeySet();

    // lifecycle, guarded by this
    private ListenerStatus status = ListenerStatus.PENDING;
    private String lastError;
    private Attempt current;
    private boolean started;
    private boolean closed;

    public EngineListener(ListenerSpec spec, SequenceWatermark watermark, BatchSink sink, ReadyGate gate,
                          Options options) {
        this.spec = Objects.requireNonNull(spec, "spec");
        this.watermark = Objects.requireNonNull(watermark, "watermark");
        this.sink = Objects.requireNonNull(sink, "sink");
        this.gate = Objects.requireNonNull(gate, "gate");
        this.options = Objects.requireNonNull(options, "options");
        this.metrics = options.metrics();
        ranksSeen.add(spec.dpRank());
    }

    /** Starts the first attempt on its own thread and returns at once (status {@code pending}). */
    public synchronized void start() {
        if (started || closed) {
            return;
        }
        started = true;
        launch(null);
    }

    public ListenerSpec spec() {
        return spec;
    }

    public SequenceWatermark watermark() {
        return watermark;
    }

    public synchronized ListenerStatus status() {
        return status;
    }

    public synchronized String lastError() {
        return lastError;
    }

    public synchronized ListenerSnapshot snapshot() {
        return new ListenerSnapshot(spec.endpoint(), status, lastError);
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
        Thread thread = new Thread(attempt, "kv-listener-" + Long.toUnsignedString(spec.instanceId()) + "-"
                + spec.dpRank());
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
            LOG.log(System.Logger.Level.ERROR, "listener {0} dp_rank {1} failed: {2}",
                    Long.toUnsignedString(spec.instanceId()), spec.dpRank(), error);
        }
    }

    private synchronized void recordError(Attempt attempt, String error) {
        if (current == attempt && !closed) {
            lastError = error;
        }
        LOG.log(System.Logger.Level.WARNING, "worker {0} dp_rank {1}: {2}",
                Long.toUnsignedString(spec.instanceId()), spec.dpRank(), error);
    }

    private void logOnce(String kind, String message) {
        if (loggedOnce.add(kind)) {
            LOG.log(System.Logger.Level.WARNING, "worker {0} dp_rank {1} ({2}): {3} (logged once per kind)",
                    Long.toUnsignedString(spec.instanceId()), spec.dpRank(), spec.endpoint(), message);
        }
    }

    private String workerName() {
        return "worker " + Long.toUnsignedString(spec.instanceId()) + " dp_rank " + spec.dpRank();
    }

    static long readSeq(byte[] frame) {
        long seq = 0;
        for (byte b : frame) {
            seq = (seq << 8) | (b & 0xff);
        }
        return seq;
    }

    static byte[] seqBytes(long seq) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (seq >>> (56 - 8 * i));
        }
        return b;
    }

    private static String u(long v) {
        return Long.toUnsignedString(v);
    }

    /** One run of the socket loop, from connect to stop/failure. */
    private final class Attempt implements Runnable {

        private final Attempt previous;
        private volatile boolean stopped;
        /** set by this attempt's own thread when it cannot go on (status is then failed) */
        private boolean gaveUp;
        private Thread thread;
        private ZMQ.Socket sub;
        private ZMQ.Socket dealer;
        private boolean seenLive;
        private long lastLive;

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
                if (!connectSub()) {
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
                if (spec.replayEndpoint() != null && !openDealer()) {
                    return;
                }
                becomeActive(this);
                while (!stopped && !gaveUp) {
                    List<byte[]> frames;
                    try {
                        frames = receive(sub);
                    } catch (ZMQException e) {
                        if (!stopped) {
                            fail(this, "ZMQ recv failed for " + workerName() + ": " + e.getMessage());
                        }
                        return;
                    }
                    if (frames != null) {
                        handleLive(frames);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                if (!stopped) {
                    fail(this, "listener for " + workerName() + " stopped: " + e);
                }
            } finally {
                destroy(sub);
                destroy(dealer);
                sub = null;
                dealer = null;
            }
        }

        private boolean connectSub() {
            try {
                sub = options.context().createSocket(SocketType.SUB);
                applyCommonOptions(sub);
                sub.setRcvHWM(options.receiveHwm());
                sub.connect(spec.endpoint());
                sub.subscribe(EMPTY);
                return true;
            } catch (RuntimeException e) {
                fail(this, "failed to connect ZMQ SUB socket to " + spec.endpoint() + ": " + describe(e));
                return false;
            }
        }

        private boolean openDealer() {
            try {
                dealer = options.context().createSocket(SocketType.DEALER);
                applyCommonOptions(dealer);
                dealer.setSendTimeOut(0);
                dealer.connect(spec.replayEndpoint());
                return true;
            } catch (RuntimeException e) {
                fail(this, "failed to connect ZMQ DEALER socket to " + spec.replayEndpoint() + ": " + describe(e));
                return false;
            }
        }

        private void applyCommonOptions(ZMQ.Socket socket) {
            socket.setLinger(0);
            socket.setReconnectIVL(100);
            socket.setReconnectIVLMax(5000);
            socket.setTCPKeepAlive(1);
            // jeromq 0.6.0 sometimes never sends its ZMTP greeting on an outgoing connect (measured: 23 of 150
            // loopback connects); the handshake deadline drops such a connection and the next attempt works
            socket.setHandshakeIvl((int) options.handshakeTimeout().toMillis());
            socket.setHeartbeatIvl(5000);
            socket.setHeartbeatTimeout(15000);
            socket.setHeartbeatTtl(15000);
            socket.setReceiveTimeOut(POLL_MILLIS);
        }

        private String describe(RuntimeException e) {
            return e.getMessage() != null ? e.getMessage() : e.toString();
        }

        private void destroy(ZMQ.Socket socket) {
            if (socket != null) {
                try {
                    socket.close();
                } catch (RuntimeException ignored) {
                    // the context may already be closed at shutdown
                }
            }
        }

        /** One whole multipart message, or null after the poll interval passed without one. */
        private List<byte[]> receive(ZMQ.Socket socket) {
            byte[] first = socket.recv(0);
            if (first == null) {
                int errno = socket.errno();
                if (errno == ZMQ.Error.EAGAIN.getCode() || errno == 0) {
                    return null;
                }
                throw new ZMQException("recv failed", errno);
            }
            List<byte[]> frames = new ArrayList<>(4);
            frames.add(first);
            while (socket.hasReceiveMore()) {
                byte[] more = socket.recv(0);
                if (more == null) {
                    throw new ZMQException("recv failed inside a multipart message", socket.errno());
                }
                frames.add(more);
            }
            return frames;
        }

        private void handleLive(List<byte[]> frames) {
            if (frames.size() != 3) {
                metrics.malformedFrame("frame_count");
                logOnce("frame_count", "skipping a message of " + frames.size()
                        + " frames; expected 3 [topic, seq, payload]");
                return;
            }
            byte[] seqFrame = frames.get(1);
            if (seqFrame.length != 8) {
                metrics.malformedFrame("seq_length");
                logOnce("seq_length", "skipping a message whose seq frame has " + seqFrame.length
                        + " bytes; expected 8");
                return;
            }
            long seq = readSeq(seqFrame);
            boolean firstLive = !seenLive;
            long previousLive = lastLive;
            seenLive = true;
            lastLive = seq;

            long last = watermark.get();
            if (last != SequenceWatermark.UNSET) {
                boolean restarted = firstLive
                        ? Long.compareUnsigned(seq, last) < 0
                        : Long.compareUnsigned(seq, previousLive) <= 0;
                if (restarted) {
                    publisherRestarted(seq, last);
                    last = SequenceWatermark.UNSET;
                }
            }
            if (last == SequenceWatermark.UNSET) {
                if (seq != 0) {
                    recover(0, seq);
                }
            } else if (Long.compareUnsigned(seq, last + 1) > 0) {
                recover(last + 1, seq);
            }
            if (stopped || gaveUp) {
                return;
            }
            long now = watermark.get();
            if (now != SequenceWatermark.UNSET && Long.compareUnsigned(seq, now) <= 0) {
                metrics.staleBatch();
                return;
            }
            applyBatch(seq, frames.get(2));
        }

        private void publisherRestarted(long seq, long last) {
            LOG.log(System.Logger.Level.INFO, "{0}: seq went back to {1} (applied up to {2}): the engine restarted;"
                    + " dropping its blocks", workerName(), u(seq), u(last));
            for (int rank : ranksSeen) {
                sink.publisherRestarted(new WorkerKey(spec.instanceId(), rank));
            }
            watermark.reset();
            metrics.publisherRestarted();
        }

        /** Fills {@code [from, until)} by replay when the engine offers it. */
        private void recover(long from, long until) {
            long missing = until - from;
            metrics.gapDetected(missing);
            if (dealer == null) {
                logOnce("no_replay", "No replay endpoint configured; batches lost");
                metrics.batchesLost(missing);
                return;
            }
            replay(from, until);
        }

        private void replay(long from, long until) {
            if (!dealer.sendMore(EMPTY) || !dealer.send(seqBytes(from))) {
                replayFailed(ReplayResult.FAILED, 0, "replay request to " + spec.replayEndpoint()
                        + " could not be sent");
                return;
            }
            long timeoutNanos = options.replayTimeout().toNanos();
            long deadline = System.nanoTime() + timeoutNanos;
            long recovered = 0;
            boolean any = false;
            long expected = from;
            String problem = null;
            while (true) {
                if (stopped) {
                    return;
                }
                List<byte[]> reply;
                try {
                    reply = receive(dealer);
                } catch (ZMQException e) {
                    if (!stopped) {
                        replayFailed(ReplayResult.FAILED, recovered, "replay from " + u(from) + " failed: "
                                + e.getMessage());
                    }
                    return;
                }
                if (reply == null) {
                    if (System.nanoTime() - deadline > 0) {
                        replayFailed(ReplayResult.TIMEOUT, recovered, "replay from " + u(from) + " timed out after "
                                + options.replayTimeout().toMillis() + " ms: no answer from " + spec.replayEndpoint());
                        return;
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
                    replayFailed(ReplayResult.FAILED, recovered, "replay from " + u(from) + " stopped: a reply of "
                            + reply.size() + " frames; expected 3 or 4");
                    return;
                }
                byte[] payload = reply.get(seqAt + 1);
                if (payload.length == 0) {
                    break; // end marker (seq ff x 8)
                }
                byte[] seqFrame = reply.get(seqAt);
                if (seqFrame.length != 8) {
                    replayFailed(ReplayResult.FAILED, recovered, "replay from " + u(from)
                            + " stopped: a reply whose seq frame has " + seqFrame.length + " bytes");
                    return;
                }
                long seq = readSeq(seqFrame);
                if (!any && Long.compareUnsigned(seq, from) > 0) {
                    problem = "replay incomplete: engine buffer starts at " + u(seq) + ", requested " + u(from);
                } else if (any && seq != expected && problem == null) {
                    problem = "replay incomplete: batches " + u(expected) + ".." + u(seq - 1)
                            + " are missing from the engine buffer";
                }
                any = true;
                expected = seq + 1;
                long last = watermark.get();
                if (last != SequenceWatermark.UNSET && Long.compareUnsigned(seq, last) <= 0) {
                    continue;
                }
                if (applyBatch(seq, payload)) {
                    recovered++;
                }
            }
            if (problem == null && !any) {
                problem = "replay incomplete: engine returned nothing from " + u(from) + ", needed up to "
                        + u(until - 1);
            } else if (problem == null && Long.compareUnsigned(expected, until) < 0) {
                problem = "replay incomplete: engine returned up to " + u(expected - 1) + ", needed up to "
                        + u(until - 1);
            }
            if (problem != null) {
                recordError(this, problem);
                metrics.replay(ReplayResult.INCOMPLETE, recovered);
            } else {
                metrics.replay(ReplayResult.OK, recovered);
            }
        }

        private void replayFailed(ReplayResult result, long recovered, String error) {
            recordError(this, error);
            metrics.replay(result, recovered);
            // a fresh DEALER, so a late or partial answer cannot be read as part of the next replay
            destroy(dealer);
            dealer = null;
            if (!openDealer()) {
                gaveUp = true;
            }
        }

        /** Decodes and applies one batch; true when applied (the watermark then is {@code seq}). */
        private boolean applyBatch(long seq, byte[] payload) {
            KvEventBatch batch;
            try {
                batch = options.decoder().decode(payload);
            } catch (EventDecodeException e) {
                metrics.decodeError(e.kind());
                logOnce("decode:" + e.kind(), "skipping batch seq " + u(seq) + ": " + e.getMessage());
                return false;
            } catch (RuntimeException e) {
                metrics.decodeError("internal");
                logOnce("decode:internal", "skipping batch seq " + u(seq) + ", decoder failed: " + e);
                return false;
            }
            int rank = batch.dataParallelRank() != null ? batch.dataParallelRank() : spec.dpRank();
            ranksSeen.add(rank);
            if (!batch.events().isEmpty()) {
                sink.apply(new WorkerKey(spec.instanceId(), rank), batch.events());
            }
            if (batch.unknownEvents() > 0) {
                metrics.unknownEvents(batch.unknownEvents());
            }
            metrics.batchApplied();
            watermark.set(seq);
            return true;
        }
    }
}
