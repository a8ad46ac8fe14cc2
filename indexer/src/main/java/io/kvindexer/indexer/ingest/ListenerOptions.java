package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.event.EngineEventDecoder;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import org.zeromq.ZContext;

/**
 * How a listener connects, replays and reports; {@link #defaults()} for production.
 *
 * @param context          the ZeroMQ context the replay sockets are made from (the live stream is read by
 *                         {@link Subscriber}, which speaks ZMTP itself: what waits there is the kernel's TCP buffer,
 *                         then the engine's PUB queue; what waits for the index is bounded in bytes by the pollers'
 *                         {@link InflightBytes})
 * @param replayTimeout    longest wait for the next replay reply before giving up on a replay
 * @param handshakeTimeout a connection whose ZMTP handshake takes longer is dropped and made again
 * @param replayPermits    how many replays may run at once (shared by the process's listeners)
 * @param replayChunk      batches one replay request may return before the next request continues
 * @param pollers          the threads that serve the listeners' sockets and replays
 * @param degradedHold     how long a degraded listener stays so after its last loss when neither an
 *                         {@code AllBlocksCleared} nor an engine restart says sooner that the index is complete again
 *                         ({@link Exactness})
 * @param catchUpOnConnect a new registration whose engine sends nothing within a second of the connection asks the
 *                         engine's replay endpoint for everything from seq 0, so one that joins a running engine that
 *                         is idle now gets its buffer and knows at once whether it is whole (the service's setting;
 *                         the listener tests that count replays keep it off)
 * @param tailCheckAfter   how long a stream that was behind its engine stays quiet before the engine is asked
 *                         whether any batch followed the last one that arrived (zero: never; the tail check). A PUB
 *                         socket drops what its high-water mark cannot hold, and a dropped tail shows as a gap only
 *                         when a later batch comes, which an engine gone idle does not send (the service's setting
 *                         is a second; the listener tests that count replays keep it off)
 * @param stopWait         how long stopping a listener's attempt waits for its socket to close; a replay notices a
 *                         stop within a poll, so only one stuck (in the index, say) runs out the wait, and then no new
 *                         attempt starts beside it
 */
public record ListenerOptions(
        ZContext context,
        Duration replayTimeout,
        Duration handshakeTimeout,
        EngineEventDecoder decoder,
        IngestMetrics metrics,
        ReplayPermits replayPermits,
        int replayChunk,
        IngestPollers pollers,
        Duration degradedHold,
        boolean catchUpOnConnect,
        Duration tailCheckAfter,
        Duration stopWait) {

    /** {@code --degraded-hold}'s default. */
    public static final Duration DEFAULT_DEGRADED_HOLD = Duration.ofMinutes(1);

    public ListenerOptions {
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(replayTimeout, "replayTimeout");
        Objects.requireNonNull(handshakeTimeout, "handshakeTimeout");
        Objects.requireNonNull(decoder, "decoder");
        Objects.requireNonNull(metrics, "metrics");
        Objects.requireNonNull(replayPermits, "replayPermits");
        Objects.requireNonNull(pollers, "pollers");
        Objects.requireNonNull(degradedHold, "degradedHold");
        Objects.requireNonNull(tailCheckAfter, "tailCheckAfter");
        Objects.requireNonNull(stopWait, "stopWait");
        if (replayChunk < 1) {
            throw new IllegalArgumentException("replayChunk must be >= 1");
        }
    }

    public static ListenerOptions defaults() {
        return defaults(IngestPollers.shared());
    }

    /** The defaults, served by {@code pollers} (on the shared context). */
    public static ListenerOptions defaults(IngestPollers pollers) {
        return new ListenerOptions(
                ZmqContext.shared(),
                Duration.ofSeconds(2),
                Duration.ofSeconds(2),
                new EngineEventDecoder(),
                IngestMetrics.NOOP,
                ReplayPermits.shared(),
                10_000,
                pollers,
                DEFAULT_DEGRADED_HOLD,
                false,
                Duration.ZERO,
                Duration.ofSeconds(30));
    }

    ReplayClient.Settings replaySettings() {
        return new ReplayClient.Settings(
                replayTimeout,
                replayChunk,
                3,
                Duration.ofMillis(250),
                Duration.ofSeconds(10),
                replayPermits,
                handshakeTimeout,
                ReplayClient.RECEIVE_POLL_MILLIS);
    }

    /**
     * These options with what {@code change} sets on a mutable copy, e.g. {@code with(o -> o.replayChunk = 100)}: the
     * one way to derive options, so a new component needs no wither of its own.
     */
    public ListenerOptions with(Consumer<Draft> change) {
        Draft d = new Draft(this);
        change.accept(d);
        return new ListenerOptions(
                d.context,
                d.replayTimeout,
                d.handshakeTimeout,
                d.decoder,
                d.metrics,
                d.replayPermits,
                d.replayChunk,
                d.pollers,
                d.degradedHold,
                d.catchUpOnConnect,
                d.tailCheckAfter,
                d.stopWait);
    }

    /** A mutable copy of every component, which {@link #with} hands out to change and then builds. */
    public static final class Draft {
        public ZContext context;
        public Duration replayTimeout;
        public Duration handshakeTimeout;
        public EngineEventDecoder decoder;
        public IngestMetrics metrics;
        public ReplayPermits replayPermits;
        public int replayChunk;
        public IngestPollers pollers;
        public Duration degradedHold;
        public boolean catchUpOnConnect;
        public Duration tailCheckAfter;
        public Duration stopWait;

        private Draft(ListenerOptions o) {
            context = o.context;
            replayTimeout = o.replayTimeout;
            handshakeTimeout = o.handshakeTimeout;
            decoder = o.decoder;
            metrics = o.metrics;
            replayPermits = o.replayPermits;
            replayChunk = o.replayChunk;
            pollers = o.pollers;
            degradedHold = o.degradedHold;
            catchUpOnConnect = o.catchUpOnConnect;
            tailCheckAfter = o.tailCheckAfter;
            stopWait = o.stopWait;
        }
    }
}
