package io.kvindexer.indexer.http;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.common.buffers.DataWriter;
import io.helidon.common.concurrency.limits.Limit;
import io.helidon.common.socket.HelidonSocket;
import io.helidon.common.socket.PeerInfo;
import io.helidon.common.task.InterruptableTask;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.ListenerContext;
import io.helidon.webserver.ProxyProtocolData;
import io.helidon.webserver.Router;
import io.helidon.webserver.ServerConnectionException;
import io.helidon.webserver.http1.Http1Config;
import io.helidon.webserver.http1.Http1ConnectionSelector;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;

/**
 * Helidon's HTTP/1 connections, told apart by one thing: a connection's reads say when a request line starts to
 * arrive, so that {@link BodyDeadline} bounds the request's head from its first byte. Helidon reports a request line
 * only once it is whole ({@code Http1ConnectionListener.prologue}), and bounds the wait for it only by its idle
 * connection timeout (minutes), so a client that trickles its request line ({@code GET /hea}, then a byte every few
 * seconds) held a connection thread for that long. The bytes a connection reads pass through a reader of ours;
 * those that arrive while Helidon reads a request line ({@link InterruptableTask#canInterrupt}, which is true then
 * and only then) start the clock, as does a wait for more of a request line whose first part is already in (it came
 * with the previous request's bytes). An idle keep-alive connection reads nothing, so its clock does not run. The
 * first wait for a request line also ends the bound on reading an unread body's rest ({@link BodyDeadline#drainRest}):
 * that read is over. As a connection ends, it lets go of its deadline ({@link BodyDeadline#connectionEnded}).
 */
final class TimedHttp1 implements ServerConnectionSelector {

    /** the connection this thread serves, while it does */
    private static final ThreadLocal<InterruptableTask<?>> SERVING = new ThreadLocal<>();

    private final Http1ConnectionSelector http1;
    private final Duration timeout;

    private TimedHttp1(Http1Config config, Duration timeout) {
        this.http1 = Http1ConnectionSelector.builder().config(config).build();
        this.timeout = timeout;
    }

    /**
     * Whether this thread's connection is reading a request line, or failed to: Helidon takes a request line whose
     * method is not an HTTP token for an internal error (500, a warning with its stack trace), while the line is
     * still being read, so that the answer can be a 400 ({@code IndexerRouting}).
     */
    static boolean readingRequestLine() {
        InterruptableTask<?> task = SERVING.get();
        return task != null && task.canInterrupt();
    }

    /** HTTP/1 with {@code config}, a request's head bounded by {@code timeout} from its first byte. */
    static ServerConnectionSelector of(Http1Config config, Duration timeout) {
        return new TimedHttp1(config, timeout);
    }

    @Override
    public int bytesToIdentifyConnection() {
        return http1.bytesToIdentifyConnection();
    }

    @Override
    public Support supports(BufferData data) {
        return http1.supports(data);
    }

    @Override
    public Set<String> supportedApplicationProtocols() {
        return http1.supportedApplicationProtocols();
    }

    @Override
    public ServerConnection connection(ConnectionContext ctx) {
        Reads reads = new Reads(ctx, timeout);
        ServerConnection connection = http1.connection(new Context(ctx, reads.reader));
        InterruptableTask<?> task = connection instanceof InterruptableTask<?> t ? t : null;
        reads.connection = task;
        return new Ending(connection, task);
    }

    /**
     * The HTTP/1 connection, which lets go of its {@link BodyDeadline} as it ends: once per connection, not per
     * request. Still a task that says when it can be interrupted, which the server asks of its connection.
     */
    private record Ending(ServerConnection connection, InterruptableTask<?> task)
            implements ServerConnection, InterruptableTask<Void> {
        @Override
        public void handle(Limit limit) throws InterruptedException {
            SERVING.set(task);
            try {
                connection.handle(limit);
            } finally {
                SERVING.remove();
                BodyDeadline.connectionEnded();
            }
        }

        @Override
        public boolean canInterrupt() {
            return task != null && task.canInterrupt();
        }

        @Override
        public Duration idleTime() {
            return connection.idleTime();
        }

        @Override
        public void close(boolean interrupt) {
            connection.close(interrupt);
        }
    }

    /** The connection's reads: the socket's bytes as the server's reader has them, noting a request line's. */
    private static final class Reads {
        private final ConnectionContext ctx;
        private final Duration timeout;
        private final DataReader reader = DataReader.create(this::pull);
        /** the HTTP/1 connection, reading a request line when it can be interrupted; set before its first read */
        private InterruptableTask<?> connection;
        /** whether the socket gave bytes (or its end) before */
        private boolean readBefore;

        Reads(ConnectionContext ctx, Duration timeout) {
            this.ctx = ctx;
            this.timeout = timeout;
        }

        /** The next bytes from the socket (through the server's reader, which holds the first ones); null at its end. */
        private byte[] pull() {
            if (readingRequestLine()) {
                BodyDeadline.awaitingRequest(); // whatever came before (an unread body's rest) is read
                if (reader.available() > 0) {
                    // part of a request line came with the previous request's bytes: the rest is awaited from now
                    BodyDeadline.requestLineArriving(timeout, ctx);
                }
            }
            byte[] bytes = next();
            if (!readBefore) {
                readBefore = true;
                HandshakeDeadline.handshakeDone(ctx.remotePeer().address()); // a TLS socket's first bytes follow it
            }
            if (bytes != null && readingRequestLine()) {
                BodyDeadline.requestLineArriving(timeout, ctx);
            }
            return bytes;
        }

        /**
         * The bytes the server read to tell the protocol (once), then the socket's own reads, handed on as they come:
         * reading through the server's reader instead would copy every chunk once more.
         */
        private byte[] next() {
            DataReader first = ctx.dataReader();
            if (first.available() > 0) {
                return first.readBytes(first.available());
            }
            try {
                return ctx.serverSocket().get(); // null: the client closed the connection
            } catch (UncheckedIOException e) {
                throw new ServerConnectionException("Failed to get data from socket", e); // as the server's reader
            }
        }

        private boolean readingRequestLine() {
            return connection != null && connection.canInterrupt();
        }
    }

    /** The server's connection context, with our reader in place of its own. */
    private record Context(ConnectionContext ctx, DataReader reader) implements ConnectionContext {
        @Override
        public DataReader dataReader() {
            return reader;
        }

        @Override
        public ListenerContext listenerContext() {
            return ctx.listenerContext();
        }

        @Override
        public ExecutorService executor() {
            return ctx.executor();
        }

        @Override
        public DataWriter dataWriter() {
            return ctx.dataWriter();
        }

        @Override
        public Router router() {
            return ctx.router();
        }

        @Override
        public Optional<ProxyProtocolData> proxyProtocolData() {
            return ctx.proxyProtocolData();
        }

        @Override
        public HelidonSocket serverSocket() {
            return ctx.serverSocket();
        }

        @Override
        public PeerInfo remotePeer() {
            return ctx.remotePeer();
        }

        @Override
        public PeerInfo localPeer() {
            return ctx.localPeer();
        }

        @Override
        public boolean isSecure() {
            return ctx.isSecure();
        }

        @Override
        public String socketId() {
            return ctx.socketId();
        }

        @Override
        public String childSocketId() {
            return ctx.childSocketId();
        }
    }
}
