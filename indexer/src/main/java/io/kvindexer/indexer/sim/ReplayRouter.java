package io.kvindexer.indexer.sim;

import io.kvindexer.indexer.ingest.Frames;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.zeromq.ZMQ;

/**
 * The simulated engine's replay side: a ring buffer of past batches and the ROUTER protocol that answers
 * {@code ["", seq]} with every buffered batch from {@code seq} and an end marker (see {@code docs/compatibility.md},
 * "Sequence numbers and replay"), plus the fault controls (silent, deferred). Runs on the publisher thread; the
 * controls and counters may be touched from any thread.
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

    ReplayRouter(int bufferSteps, EngineSimulator.ReplayLayout layout, byte[] topic) {
        this.bufferSteps = bufferSteps;
        this.withTopic = layout == EngineSimulator.ReplayLayout.WITH_TOPIC;
        this.topic = topic;
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
        for (Entry e : entries) {
            if (Long.compareUnsigned(e.seq(), start) >= 0) {
                reply(router, identity, Frames.seqBytes(e.seq()), withTopic ? topic : null, e.payload());
            }
        }
        reply(router, identity, Frames.seqBytes(Frames.END_SEQ), withTopic ? Frames.EMPTY : null, Frames.EMPTY);
    }

    /** {@code [id, "", topic, seq, payload]} (vLLM ≥ 0.26) or {@code [id, "", seq, payload]} without a topic. */
    private static void reply(ZMQ.Socket router, byte[] identity, byte[] seq, byte[] topic, byte[] payload) {
        if (topic != null) {
            Frames.send(router, identity, Frames.EMPTY, topic, seq, payload);
        } else {
            Frames.send(router, identity, Frames.EMPTY, seq, payload);
        }
    }
}
