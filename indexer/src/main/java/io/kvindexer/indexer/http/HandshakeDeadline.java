package io.kvindexer.indexer.http;

import io.helidon.common.socket.SocketOptions;
import io.kvindexer.indexer.common.Watchdog;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bounds a TLS connection's handshake, up to its first request's bytes, by {@code --request-read-timeout-ms}, as a
 * request's head is bounded. Helidon runs the handshake inside the connection's first read, with no time limit and
 * unseen by the reads that start the head's clock ({@link TimedHttp1}: the handshake's bytes are no request's), so a
 * client that sent part of a ClientHello, or nothing, held its socket and thread until Helidon's idle check (over 6
 * minutes). The socket options the server applies to each accepted channel ({@link #options}) arm a deadline; the
 * connection's first bytes, which come only after the handshake, let go of it ({@link #handshakeDone}); a deadline
 * that expires closes the channel, which ends the blocked read.
 */
final class HandshakeDeadline extends Watchdog.Deadline {

    private static final System.Logger LOG = System.getLogger(HandshakeDeadline.class.getName());

    /** by the client's address and port: what both the accepted channel and the connection's context know */
    private static final Map<SocketAddress, HandshakeDeadline> PENDING = new ConcurrentHashMap<>();

    private final SocketAddress peer;
    private final SocketChannel channel;

    private HandshakeDeadline(SocketAddress peer, SocketChannel channel) {
        this.peer = peer;
        this.channel = channel;
    }

    /** {@code given}, which also bounds each accepted connection's handshake by {@code timeout}. */
    static SocketOptions options(SocketOptions given, Duration timeout) {
        return new Bounded(given, timeout);
    }

    /** The connection from {@code peer} read its first bytes, so it is past its handshake. */
    static void handshakeDone(SocketAddress peer) {
        HandshakeDeadline d = PENDING.remove(peer);
        if (d != null) {
            d.retire();
        }
    }

    private static void arm(SocketChannel channel, Duration timeout) {
        SocketAddress peer;
        try {
            peer = channel.getRemoteAddress();
        } catch (IOException e) {
            return; // closed already: nothing to bound
        }
        HandshakeDeadline d = new HandshakeDeadline(peer, channel);
        HandshakeDeadline before = PENDING.put(peer, d);
        if (before != null) {
            before.retire(); // that connection from the same address and port is over
        }
        d.armIn(timeout);
    }

    @Override
    protected void expired(long now) {
        retire();
        if (PENDING.remove(peer, this)) {
            // a close waits for the blocked read to let go: not on the watchdog's thread
            Thread.ofVirtual().name("tls-handshake-timeout").start(() -> {
                try {
                    channel.close();
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.DEBUG, "closing a stalled TLS handshake from {0}: {1}", peer, e);
                }
            });
        }
    }

    /** The server's socket options as given, plus a deadline armed on each accepted channel. */
    private record Bounded(SocketOptions given, Duration timeout) implements SocketOptions {

        @Override
        public void configureSocket(SocketChannel channel) {
            given.configureSocket(channel);
            arm(channel, timeout);
        }

        @Override
        public void configureSocket(Socket socket) {
            given.configureSocket(socket);
        }

        @Override
        public Map<SocketOption<?>, Object> socketOptions() {
            return given.socketOptions();
        }

        @Override
        public Duration connectTimeout() {
            return given.connectTimeout();
        }

        @Override
        public Duration readTimeout() {
            return given.readTimeout();
        }

        @Override
        public Optional<Integer> socketReceiveBufferSize() {
            return given.socketReceiveBufferSize();
        }

        @Override
        public Optional<Integer> socketSendBufferSize() {
            return given.socketSendBufferSize();
        }

        @Override
        public boolean socketReuseAddress() {
            return given.socketReuseAddress();
        }

        @Override
        public boolean socketKeepAlive() {
            return given.socketKeepAlive();
        }

        @Override
        public boolean tcpNoDelay() {
            return given.tcpNoDelay();
        }
    }
}
