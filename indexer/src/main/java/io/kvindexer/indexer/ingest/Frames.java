package io.kvindexer.indexer.ingest;

import java.util.ArrayList;
import java.util.List;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * The engines' ZeroMQ frame format, shared by the listener and the simulator (see {@code docs/compatibility.md},
 * "Engine event streams"): live messages are {@code [topic, seq, payload]} with an 8-byte big-endian seq; a
 * replay request is {@code ["", seq]}; a replay ends with a reply whose seq is {@link #END_SEQ} and whose payload
 * is empty. Also the socket options every connecting socket of ours gets.
 */
public final class Frames {

    public static final byte[] EMPTY = new byte[0];
    /** The seq of the replay end marker: ff × 8. */
    public static final long END_SEQ = -1L;

    private Frames() {}

    public static byte[] seqBytes(long seq) {
        byte[] b = new byte[8];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (seq >>> (56 - 8 * i));
        }
        return b;
    }

    /** Big-endian unsigned; callers check the length first (the wire seq is exactly 8 bytes). */
    public static long readSeq(byte[] frame) {
        long seq = 0;
        for (byte b : frame) {
            seq = (seq << 8) | (b & 0xff);
        }
        return seq;
    }

    /**
     * One whole multipart message, or null when the socket's receive timeout passed without one.
     *
     * @throws ZMQException on a socket error (the context closed, the socket is gone)
     */
    public static List<byte[]> receive(ZMQ.Socket socket) {
        return receive(socket, 0);
    }

    /** Like {@link #receive(ZMQ.Socket)}; {@code flags} {@code ZMQ.DONTWAIT} returns null at once when none waits. */
    public static List<byte[]> receive(ZMQ.Socket socket, int flags) {
        byte[] first = socket.recv(flags);
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

    /** Sends {@code frames} as one multipart message; false when a frame could not be queued. */
    public static boolean send(ZMQ.Socket socket, byte[]... frames) {
        for (int i = 0; i < frames.length - 1; i++) {
            if (!socket.sendMore(frames[i])) {
                return false;
            }
        }
        return socket.send(frames[frames.length - 1]);
    }

    /**
     * True for a TCP endpoint whose host is a bracketed IPv6 literal ({@code tcp://[::1]:5557}). Such a socket
     * needs {@code setIPv6(true)} before it connects or binds, or jeromq reports the host as not found.
     */
    public static boolean isIpv6(String endpoint) {
        return endpoint != null && endpoint.startsWith("tcp://[");
    }

    /** Enables IPv6 on {@code socket} when {@code endpoint} needs it; call before connect or bind. */
    public static void ipv6For(ZMQ.Socket socket, String endpoint) {
        if (isIpv6(endpoint)) {
            socket.setIPv6(true);
        }
    }

    /**
     * The options of a SUB or DEALER of ours: no linger, quick reconnects, keep-alives and heartbeats (a dead
     * engine is noticed), jeromq's own handshake deadline (a backstop behind {@code HandshakeWatch}, so give it
     * more time than the watch), IPv6 when the endpoint is bracketed, and a receive timeout so the owning loop
     * can look at its stop flag.
     */
    public static void configureClient(ZMQ.Socket socket, String endpoint, int handshakeMillis, int pollMillis) {
        socket.setLinger(0);
        socket.setReconnectIVL(100);
        socket.setReconnectIVLMax(5000);
        socket.setTCPKeepAlive(1);
        socket.setHandshakeIvl(handshakeMillis);
        socket.setHeartbeatIvl(5000);
        socket.setHeartbeatTimeout(15000);
        socket.setHeartbeatTtl(15000);
        socket.setReceiveTimeOut(pollMillis);
        ipv6For(socket, endpoint);
    }

    /** Closes {@code socket}, ignoring errors (the context may already be closed at shutdown). */
    public static void closeQuietly(ZMQ.Socket socket) {
        if (socket != null) {
            try {
                socket.close();
            } catch (RuntimeException ignored) {
                // nothing to do on shutdown
            }
        }
    }
}
