package io.kvindexer.indexer.sim;

import io.kvindexer.indexer.ingest.Frames;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * The simulated engine's replay side: a ring buffer of past batches and the ROUTER protocol that answers
 * {@code ["", seq]} with every buffered batch from {@code seq} and an end marker (see {@code docs/compatibility.md},
 * "Sequence numbers and replay"), plus the fault controls (silent, deferred, cut). Runs on the publisher thread; the
 * controls and counters may be touched from any thread.
 *
 * <p>Like vLLM's {@code ZmqEventPublisher}, the ROUTER keeps ZeroMQ's default send high-water mark (1,000 messages)
 * and one request is answered in one loop over the buffer: a reply that does not fit in the peer's queue at that
 * moment is dropped, so a long answer reaches the client with holes (and maybe without its end marker). The ROUTER
 * is made mandatory and sent to without blocking only so that the drops can be counted; what is dropped is the
 * same as with vLLM's silent drop.
 */
final class ReplayRouter {

    private static final System.Logger LOG = System.getLogger(ReplayRouter.class.getName());

    private record Entry(long seq, byte[] payload) {}

    private record DeferredRequest(byte[] identity, long start, List<Entry> snapshot) {}

    private final int bufferSteps;
    private final boolean withTopic;
    private final byte[] topic;
    private final ArrayDeque<Entry> buffer = new ArrayDeque<>();
    private final List<DeferredRequest> deferred = new ArrayList<>();

    volatile boolean silent;
    volatile boolean defer;
    final AtomicInteger requests = new AtomicInteger();
    final AtomicInteger invalidRequests = new AtomicInteger();
    final AtomicInteger deferredPending = new AtomicInteger();
    final AtomicLong lastStart = new AtomicLong(-1);
    /** the start seqs of the first requests, in arrival order (at most {@link #STARTS_KEPT}) */
    final List<Long> starts = Collections.synchronizedList(new ArrayList<>());

    private static final int STARTS_KEPT = 1_000;
    /** replies (data or end marker) the ROUTER could not queue and dropped */
    final AtomicLong dropped = new AtomicLong();
    /** how the next answer is cut on purpose (fault control); null: only the high-water mark cuts */
    final AtomicReference<Cut> nextCut = new AtomicReference<>();

    /** Of the next answer's batch replies the first {@code keep} go out, the {@code drop} after them do not. */
    record Cut(int keep, int drop, boolean endMarker) {}

    ReplayRouter(int bufferSteps, EngineSimulator.ReplayLayout layout, byte[] topic) {
        this.bufferSteps = bufferSteps;
        this.withTopic = layout == EngineSimulator.ReplayLayout.WITH_TOPIC;
        this.topic = topic;
    }

    EngineSimulator.ReplayCounts counts() {
        List<Long> startsNow;
        synchronized (starts) {
            startsNow = List.copyOf(starts);
        }
        return new EngineSimulator.ReplayCounts(
                requests.get(),
                invalidRequests.get(),
                deferredPending.get(),
                lastStart.get(),
                dropped.get(),
                startsNow);
    }

    /** Keeps a sent (or dropped-live) batch for replay; the oldest goes when the buffer is full. */
    void remember(long seq, byte[] payload) {
        if (buffer.size() == bufferSteps) {
            buffer.removeFirst();
        }
        buffer.addLast(new Entry(seq, payload));
    }

    void clear() {
        buffer.clear();
    }

    /** Reads one waiting request, if any, and answers, holds or ignores it. */
    void serve(ZMQ.Socket router) {
        List<byte[]> frames = Frames.receive(router, ZMQ.DONTWAIT);
        if (frames == null) {
            return;
        }
        if (frames.size() != 3) {
            invalidRequests.incrementAndGet();
            LOG.log(System.Logger.Level.WARNING, "Invalid replay request: {0} frames", frames.size());
            return;
        }
        long start = Frames.readSeq(frames.get(2));
        requests.incrementAndGet();
        lastStart.set(start);
        if (starts.size() < STARTS_KEPT) {
            starts.add(start);
        }
        if (silent) {
            return;
        }
        if (defer) {
            deferred.add(new DeferredRequest(frames.get(0), start, List.copyOf(buffer)));
            deferredPending.incrementAndGet();
            return;
        }
        answer(router, frames.get(0), start, buffer);
    }

    /** Answers every held request with the buffer as it was when it arrived; returns how many. */
    long answerDeferred(ZMQ.Socket router) {
        long n = deferred.size();
        if (router != null) {
            for (DeferredRequest d : deferred) {
                answer(router, d.identity(), d.start(), d.snapshot());
            }
        }
        deferred.clear();
        deferredPending.set(0);
        return n;
    }

    private void answer(ZMQ.Socket router, byte[] identity, long start, Iterable<Entry> entries) {
        Cut cut = nextCut.getAndSet(null);
        int sent = 0;
        for (Entry e : entries) {
            if (Long.compareUnsigned(e.seq(), start) >= 0) {
                int at = sent++;
                if (cut != null && at >= cut.keep() && at - cut.keep() < cut.drop()) {
                    continue;
                }
                reply(router, identity, Frames.seqBytes(e.seq()), withTopic ? topic : null, e.payload());
            }
        }
        if (cut == null || cut.endMarker()) {
            reply(router, identity, Frames.seqBytes(Frames.END_SEQ), withTopic ? Frames.EMPTY : null, Frames.EMPTY);
        }
    }

    /**
     * {@code [id, "", topic, seq, payload]} (vLLM ≥ 0.26) or {@code [id, "", seq, payload]} without a topic; dropped
     * (and counted) when the peer's queue is at the high-water mark, as a ROUTER does.
     */
    private void reply(ZMQ.Socket router, byte[] identity, byte[] seq, byte[] topic, byte[] payload) {
        // a full queue refuses the first frame (the identity) and nothing of the message is queued; so does a
        // requester that has gone (a replay that ran out of time closes its DEALER), which the mandatory ROUTER
        // throws as EHOSTUNREACH where a plain one drops it
        try {
            if (!router.send(identity, ZMQ.SNDMORE | ZMQ.DONTWAIT)) {
                dropped.incrementAndGet();
                return;
            }
        } catch (ZMQException e) {
            if (e.getErrorCode() != ZMQ.Error.EHOSTUNREACH.getCode()) {
                throw e;
            }
            dropped.incrementAndGet();
            return;
        }
        router.send(Frames.EMPTY, ZMQ.SNDMORE);
        if (topic != null) {
            router.send(topic, ZMQ.SNDMORE);
        }
        router.send(seq, ZMQ.SNDMORE);
        router.send(payload, 0);
    }
}
