package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.event.EngineEventDecoder;
import java.time.Duration;
import java.util.Objects;
import org.zeromq.ZContext;

/**
 * How a listener connects, replays and reports; {@link #defaults()} for production.
 *
 * @param context          the ZeroMQ context the sockets are made from
 * @param replayTimeout    longest wait for the next replay reply before giving up on a replay
 * @param handshakeTimeout a connection whose ZMTP handshake takes longer is dropped and made again
 * @param receiveHwm       SUB receive high-water mark, in messages: what ZeroMQ queues for one listener before the
 *                         engine's PUB drops (a gap, replayed); what waits for the index is bounded in bytes by the
 *                         pollers' {@link InflightBytes}
 * @param replayPermits    how many replays may run at once (shared by the process's listeners)
 * @param replayChunk      batches one replay request may return before the next request continues
 * @param pollers          the threads that serve the listeners' sockets and replays
 * @param degradedHold     how long a degraded listener stays so after its last loss when neither an
 *                         {@code AllBlocksCleared} nor an engine restart says sooner that the index is complete again
 *                         ({@link Exactness})
 */
public record ListenerOptions(
        ZContext context,
        Duration replayTimeout,
        Duration handshakeTimeout,
        int receiveHwm,
        EngineEventDecoder decoder,
        IngestMetrics metrics,
        ReplayPermits replayPermits,
        int replayChunk,
        IngestPollers pollers,
        Duration degradedHold) {

    /** ZeroMQ's own default: a listener's queue holds at most this many messages. */
    public static final int DEFAULT_RECEIVE_HWM = 1_000;

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
        if (replayChunk < 1) {
            throw new IllegalArgumentException("replayChunk must be >= 1");
        }
    }

    /** With the default {@link #DEFAULT_DEGRADED_HOLD}. */
    public ListenerOptions(
            ZContext context,
            Duration replayTimeout,
            Duration handshakeTimeout,
            int receiveHwm,
            EngineEventDecoder decoder,
            IngestMetrics metrics,
            ReplayPermits replayPermits,
            int replayChunk,
            IngestPollers pollers) {
        this(
                context,
                replayTimeout,
                handshakeTimeout,
                receiveHwm,
                decoder,
                metrics,
                replayPermits,
                replayChunk,
                pollers,
                DEFAULT_DEGRADED_HOLD);
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
                DEFAULT_RECEIVE_HWM,
                new EngineEventDecoder(),
                IngestMetrics.NOOP,
                ReplayPermits.shared(),
                10_000,
                pollers,
                DEFAULT_DEGRADED_HOLD);
    }

    public ListenerOptions withReplayTimeout(Duration v) {
        return new ListenerOptions(
                context,
                v,
                handshakeTimeout,
                receiveHwm,
                decoder,
                metrics,
                replayPermits,
                replayChunk,
                pollers,
                degradedHold);
    }

    public ListenerOptions withHandshakeTimeout(Duration v) {
        return new ListenerOptions(
                context,
                replayTimeout,
                v,
                receiveHwm,
                decoder,
                metrics,
                replayPermits,
                replayChunk,
                pollers,
                degradedHold);
    }

    public ListenerOptions withMetrics(IngestMetrics v) {
        return new ListenerOptions(
                context,
                replayTimeout,
                handshakeTimeout,
                receiveHwm,
                decoder,
                v,
                replayPermits,
                replayChunk,
                pollers,
                degradedHold);
    }

    public ListenerOptions withReplayPermits(ReplayPermits v) {
        return new ListenerOptions(
                context,
                replayTimeout,
                handshakeTimeout,
                receiveHwm,
                decoder,
                metrics,
                v,
                replayChunk,
                pollers,
                degradedHold);
    }

    public ListenerOptions withReplayChunk(int v) {
        return new ListenerOptions(
                context,
                replayTimeout,
                handshakeTimeout,
                receiveHwm,
                decoder,
                metrics,
                replayPermits,
                v,
                pollers,
                degradedHold);
    }

    public ListenerOptions withPollers(IngestPollers v) {
        return new ListenerOptions(
                context,
                replayTimeout,
                handshakeTimeout,
                receiveHwm,
                decoder,
                metrics,
                replayPermits,
                replayChunk,
                v,
                degradedHold);
    }

    public ListenerOptions withReceiveHwm(int v) {
        return new ListenerOptions(
                context,
                replayTimeout,
                handshakeTimeout,
                v,
                decoder,
                metrics,
                replayPermits,
                replayChunk,
                pollers,
                degradedHold);
    }

    public ListenerOptions withDegradedHold(Duration v) {
        return new ListenerOptions(
                context,
                replayTimeout,
                handshakeTimeout,
                receiveHwm,
                decoder,
                metrics,
                replayPermits,
                replayChunk,
                pollers,
                v);
    }

    ReplayClient.Settings replaySettings() {
        return new ReplayClient.Settings(
                replayTimeout, replayChunk, 3, Duration.ofMillis(250), Duration.ofSeconds(10), replayPermits);
    }
}
