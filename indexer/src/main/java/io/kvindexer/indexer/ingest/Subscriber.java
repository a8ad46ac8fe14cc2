package io.kvindexer.indexer.ingest;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The SUB socket of one listener attempt, subscribed to everything, with its handshake watched: a connection
 * that never finishes its ZMTP handshake (see {@link HandshakeWatch}) is dropped and the socket made again. A
 * SUB whose connection never handshook cannot have received anything, so recreating it loses nothing. Whether the
 * engine connection is up is told to the {@link EngineLink}, which outlives the recreated sockets.
 */
final class Subscriber implements AutoCloseable {

    private final ZContext context;
    private final String endpoint;
    private final int receiveHwm;
    private final int handshakeMillis;
    private final int pollMillis;
    private final Runnable onRecreate;
    private final EngineLink link;
    private ZMQ.Socket socket;
    private HandshakeWatch watch;
    private final ArrayDeque<List<byte[]>> drained = new ArrayDeque<>();

    Subscriber(
            ZContext context,
            String endpoint,
            int receiveHwm,
            Duration handshakeTimeout,
            int pollMillis,
            Runnable onRecreate,
            EngineLink link) {
        this.context = context;
        this.endpoint = endpoint;
        this.receiveHwm = receiveHwm;
        this.handshakeMillis = (int) handshakeTimeout.toMillis();
        this.pollMillis = pollMillis;
        this.onRecreate = onRecreate;
        this.link = link;
    }

    /** Creates and connects the socket; throws what jeromq throws for a bad endpoint. */
    void open() {
        ZMQ.Socket s = context.createSocket(SocketType.SUB);
        try {
            // jeromq's own handshake timer is the backstop at twice the deadline; the watch acts first
            Frames.configureClient(s, endpoint, 2 * handshakeMillis, pollMillis);
            s.setRcvHWM(receiveHwm);
            watch = HandshakeWatch.attach(s, handshakeMillis * 1_000_000L, link);
            s.connect(endpoint);
            s.subscribe(Frames.EMPTY);
        } catch (RuntimeException e) {
            Frames.closeQuietly(s);
            throw e;
        }
        socket = s;
    }

    /**
     * Makes a stalled connection's socket again (see {@link HandshakeWatch}); what the old socket still had queued
     * (from an earlier connection that did handshake) is kept and handed out first by {@link #receiveNow}.
     */
    void checkStall() {
        if (socket == null || !watch.stalled()) {
            return;
        }
        for (List<byte[]> m; (m = Frames.receive(socket, ZMQ.DONTWAIT)) != null; ) {
            drained.addLast(m);
        }
        watch.detach();
        Frames.closeQuietly(socket);
        socket = null;
        open();
        onRecreate.run();
    }

    /** Messages kept from a remade socket wait to be read (the socket itself may not signal them). */
    boolean hasKept() {
        return !drained.isEmpty();
    }

    /** One whole message, or null at once when none waits. */
    List<byte[]> receiveNow() {
        if (!drained.isEmpty()) {
            return drained.removeFirst();
        }
        return Frames.receive(socket, ZMQ.DONTWAIT);
    }

    /** The socket, for the poller's poll set. */
    zmq.SocketBase socketBase() {
        return socket.base();
    }

    @Override
    public void close() {
        if (watch != null) {
            watch.detach(); // a pause or stop is not the engine going away
        }
        Frames.closeQuietly(socket);
        socket = null;
    }
}
