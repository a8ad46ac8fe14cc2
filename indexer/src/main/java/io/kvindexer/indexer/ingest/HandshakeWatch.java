package io.kvindexer.indexer.ingest;

import java.util.function.LongSupplier;
import org.zeromq.ZEvent;
import org.zeromq.ZMQ;
import org.zeromq.ZMonitor;

/**
 * Watches one connecting socket's ZMTP handshake through its monitor events. jeromq 0.6.0 sometimes completes
 * the TCP connect of a fresh connection but never sends its greeting (a race in its poller when the connect is
 * handed over; jeromq PR #1022); a PUB then drops everything for that subscriber. A connection that has not
 * handshaken within the deadline after its TCP connect is {@link #stalled()}: the owner recreates the socket.
 *
 * <p>The same events tell an {@link EngineLink} (when one is given) that the connection is up or went down.
 *
 * <p>The hook runs on the context's I/O thread; the owner polls {@link #stalled()} from its own thread. Once
 * {@link #detach() detached} (the socket is being closed) it ignores what the closing socket still reports.
 */
final class HandshakeWatch {

    private static final int EVENTS = ZMQ.EVENT_CONNECTED | ZMQ.EVENT_HANDSHAKE_PROTOCOL | ZMQ.EVENT_DISCONNECTED;

    private final long deadlineNanos;
    private final LongSupplier clock;
    private final EngineLink link;
    /** nanoTime of the last TCP connect without a handshake since; 0 when none is pending */
    private volatile long connectedAt;

    private volatile boolean handshaken;
    private volatile boolean detached;

    HandshakeWatch(long deadlineNanos, LongSupplier clock) {
        this(deadlineNanos, clock, null);
    }

    HandshakeWatch(long deadlineNanos, LongSupplier clock, EngineLink link) {
        this.deadlineNanos = deadlineNanos;
        this.clock = clock;
        this.link = link;
    }

    /** Installs the hook; call before connect. */
    static HandshakeWatch attach(ZMQ.Socket socket, long deadlineNanos) {
        return attach(socket, deadlineNanos, null);
    }

    /** Installs the hook, also reporting to {@code link} (null: none); call before connect. */
    static HandshakeWatch attach(ZMQ.Socket socket, long deadlineNanos, EngineLink link) {
        HandshakeWatch watch = new HandshakeWatch(deadlineNanos, System::nanoTime, link);
        socket.setEventHook(watch::onEvent, EVENTS);
        return watch;
    }

    /** From now on events are ignored: call before closing the socket. */
    void detach() {
        detached = true;
    }

    void onEvent(ZEvent event) {
        on(event.getEvent());
    }

    /** One monitor event (also the seam for plain unit tests). */
    void on(ZMonitor.Event event) {
        if (detached) {
            return;
        }
        switch (event) {
            case CONNECTED -> {
                handshaken = false;
                connectedAt = nonZero(clock.getAsLong());
            }
            case HANDSHAKE_PROTOCOL -> {
                handshaken = true;
                connectedAt = 0;
                if (link != null) {
                    link.handshaken();
                }
            }
            case DISCONNECTED -> {
                connectedAt = 0;
                if (link != null) {
                    link.disconnected();
                }
            }
            default -> {}
        }
    }

    /** True once any connection handshook (the subscription has gone out at least once). */
    boolean handshaken() {
        return handshaken;
    }

    /** A TCP connection is up but has not handshaken within the deadline. */
    boolean stalled() {
        long at = connectedAt;
        return at != 0 && clock.getAsLong() - at > deadlineNanos;
    }

    private static long nonZero(long t) {
        return t == 0 ? 1 : t;
    }
}
