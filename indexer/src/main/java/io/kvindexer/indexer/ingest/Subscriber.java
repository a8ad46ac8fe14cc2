package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.ingest.zmtp.FrameReader;
import io.kvindexer.indexer.ingest.zmtp.Zmtp;
import io.kvindexer.indexer.ingest.zmtp.ZmtpException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

/**
 * The SUB side of one listener attempt: a ZMTP 3.0 subscriber (NULL mechanism, subscribed to everything) written
 * over one {@link SocketChannel}, registered on its poller's selector. A jeromq SUB would cost a mailbox (a pipe
 * and a selector: 4 descriptors) on top of the TCP connection; this costs the connection only.
 *
 * <p>It reconnects by itself, as a ZeroMQ socket does: after a loss, a refused connect or a protocol error it waits
 * (100 ms, doubling up to 5 s) and connects again, looking the host name up again each time. The lookup runs off
 * the poller ({@link HostLookup}), so a slow DNS answer holds only this engine, and it counts against the connect's
 * 10 s: one that takes longer is a failed attempt. A name that does not resolve is retried too, whether or not it ever
 * did: a Kubernetes engine's name often resolves only once its pod is up, and until then the listener is pending,
 * as the reference describes a worker that is not up yet (Dynamo's zeromq-rs connect fails it). A connection whose
 * handshake does not finish within the deadline is dropped and made again at once (counted). When the peer speaks
 * ZMTP 3.1 it is sent a PING every 5 s (TTL 15 s) and dropped after 15 s of silence; the peer's PINGs are answered.
 *
 * <p>Reading is driven by the owner: {@link #wantRead} says whether the stream may read now; while it may not (a
 * replay runs, the index is behind) nothing is read, the bytes back up in the kernel's TCP buffers and the engine's
 * PUB drops at its high-water mark (a gap, replayed later). Between reads it holds at most the whole messages of one
 * read ({@link #CHUNK} bytes) and one partly received frame. Everything here runs on the poller thread.
 */
final class Subscriber implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(Subscriber.class.getName());

    /** bytes read from one connection at a time */
    static final int CHUNK = 32 * 1024;
    /** the largest frame accepted (an engine batch is far smaller) */
    static final long MAX_FRAME = 256L * 1024 * 1024;

    private static final long FIRST_BACKOFF_NANOS = 100_000_000L;
    private static final long MAX_BACKOFF_NANOS = 5_000_000_000L;
    private static final long CONNECT_TIMEOUT_NANOS = 10_000_000_000L;
    private static final long PING_EVERY_NANOS = 5_000_000_000L;
    private static final long SILENCE_NANOS = 15_000_000_000L;
    private static final byte[] GREETING_AND_READY = concat(Zmtp.greeting(), Zmtp.ready("SUB"));
    private static final byte[] SUBSCRIBE_ALL = Zmtp.subscribe(Frames.EMPTY);
    private static final ThreadLocal<ByteBuffer> READ_BUFFER =
            ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(CHUNK));

    private enum State {
        IDLE,
        /** the host name is being looked up, off the poller */
        RESOLVING,
        CONNECTING,
        HANDSHAKE,
        READY
    }

    private final Selector selector;
    private final Object attachment;
    private final String endpoint;
    private ZmqAddress address;
    private final long handshakeNanos;
    private final Runnable onRecreate;
    private final EngineLink link;
    private final HostLookup lookup;
    /** run when a lookup ends, from its thread: has the poller look at this connection */
    private final Runnable wake;

    private final ArrayDeque<List<byte[]>> messages = new ArrayDeque<>();
    private final FrameReader reader = new FrameReader(MAX_FRAME);
    private final FrameReader.Sink sink = new FrameReader.Sink() {
        @Override
        public void message(List<byte[]> frames) {
            messages.addLast(frames);
            completed = true;
        }

        @Override
        public void command(byte[] body) throws ZmtpException {
            onCommand(body);
        }
    };

    private State state = State.IDLE;
    /** the host needs a lookup before each connect (a name, not an IP literal) */
    private boolean named;
    /** the running lookup while {@code RESOLVING} */
    private CompletableFuture<InetAddress> lookingUp;

    private SocketChannel channel;
    private SelectionKey key;
    private long since;
    private long reconnectAt;
    private long backoff = FIRST_BACKOFF_NANOS;
    private byte[] greeting;
    private int greetingHave;
    private int peerVersion;
    private ByteBuffer out;
    private long heardAt;
    /** the read being decoded completed a message */
    private boolean completed;

    private long pingAt;
    private boolean wantRead;
    /**
     * the last read left the socket empty (it returned less than a whole buffer): reading it again before the
     * selector reports it would be a system call that returns nothing, one per message when engines publish one
     * batch at a time
     */
    private boolean drained;
    /** a read since {@link #wasBehind} last asked filled the read buffer */
    private boolean behind;

    private boolean closed;
    private String lastProblem;

    /**
     * @param selector   the poller's selector the connection is registered on; null: none (the owner polls)
     * @param attachment what the selection key carries (the poller's stream)
     * @param onRecreate run when a connection is dropped for not finishing its handshake in time
     */
    Subscriber(
            Selector selector,
            Object attachment,
            String endpoint,
            Duration handshakeTimeout,
            Runnable onRecreate,
            EngineLink link) {
        this(selector, attachment, endpoint, handshakeTimeout, onRecreate, link, HostLookup.SYSTEM, () -> {});
    }

    /**
     * As above, with how host names are looked up and what a finished lookup runs (from the lookup's thread) to have
     * the poller act on it.
     */
    Subscriber(
            Selector selector,
            Object attachment,
            String endpoint,
            Duration handshakeTimeout,
            Runnable onRecreate,
            EngineLink link,
            HostLookup lookup,
            Runnable wake) {
        this.selector = selector;
        this.lookup = lookup;
        this.wake = wake;
        this.attachment = attachment;
        this.endpoint = endpoint;
        this.handshakeNanos = handshakeTimeout.toNanos();
        this.onRecreate = onRecreate;
        this.link = link;
    }

    /**
     * Starts connecting; throws for an endpoint that cannot be connected to at all (no such scheme, `*`). A host name
     * is looked up first, off the poller: one that does not resolve is looked up again, as a refused connect is.
     */
    void open() {
        address = ZmqAddress.parse(endpoint);
        named = address.needsLookup();
        if (!named) {
            address.resolve(); // `*` fails the listener now
        }
        connect(System.nanoTime());
    }

    /** Whether the owner wants messages read now; off, nothing is read from a ready connection. */
    void wantRead(boolean want) {
        if (want != wantRead) {
            wantRead = want;
            updateInterest();
        }
    }

    /** The per-turn duties: reconnect when due, drop a stalled handshake or a silent 3.1 peer, send a PING. */
    void tick() {
        if (closed) {
            return;
        }
        long now = System.nanoTime();
        switch (state) {
            case IDLE -> {
                if (now - reconnectAt >= 0) {
                    connect(now);
                }
            }
            case RESOLVING -> lookedUp(now);
            case CONNECTING -> {
                if (now - since > CONNECT_TIMEOUT_NANOS) {
                    drop("connect timed out", true);
                } else if (selector == null) {
                    service();
                }
            }
            case HANDSHAKE -> {
                if (now - since > handshakeNanos) {
                    // shown, not logged: counted as a handshake retry (jeromq and slow peers), made again at once
                    link.attemptFailed("connected, but no ZeroMQ handshake within "
                            + TimeUnit.NANOSECONDS.toMillis(handshakeNanos) + " ms (is a ZeroMQ PUB listening there?)");
                    drop(null, false);
                    onRecreate.run();
                } else if (selector == null) {
                    service();
                }
            }
            case READY -> heartbeat(now);
        }
    }

    /** The connection's key was selected (or, with no selector, a turn came): connect, write, handshake. */
    void service() {
        drained = false;
        try {
            if (state == State.CONNECTING) {
                if (!channel.finishConnect()) {
                    return;
                }
                if (connectedToItself(channel)) {
                    drop("connected to itself (nothing listens there yet)", true);
                    return;
                }
                state = State.HANDSHAKE;
                since = System.nanoTime();
                greeting = new byte[Zmtp.GREETING_SIZE];
                greetingHave = 0;
                send(GREETING_AND_READY);
            }
            flush();
            if (state == State.HANDSHAKE) {
                readOnce();
                flush(); // the subscription, once the peer's READY came
            }
        } catch (IOException e) {
            drop(e.getMessage() == null ? e.toString() : e.getMessage(), true);
        } catch (ZmtpException e) {
            drop(e.getMessage(), true);
        }
    }

    /**
     * A connect to a free port of this host may be given that very port as its own and then reach itself (TCP's
     * simultaneous open). It must not stay: it is no engine, and it holds the port the engine is about to bind.
     */
    static boolean connectedToItself(SocketChannel channel) throws IOException {
        return channel.getRemoteAddress() != null && channel.getRemoteAddress().equals(channel.getLocalAddress());
    }

    /** Part of a message has arrived and the rest has not: the engine is sending. */
    boolean receiving() {
        return reader.midMessage();
    }

    /** The handshake is done: messages flow. */
    boolean ready() {
        return state == State.READY;
    }

    /**
     * Whether a read since the last call filled the read buffer and completed a message: more waited in the kernel
     * than one read takes, so this reader was behind the engine. An engine's PUB queue fills (and drops) only after
     * that: it queues only while TCP holds it back, that is while the kernel's receive buffer here is full. A full
     * read in the middle of one large message is no such sign.
     */
    boolean wasBehind() {
        boolean was = behind;
        behind = false;
        return was;
    }

    /** Messages kept from an earlier read wait to be handed out (the socket itself will not signal them). */
    boolean hasKept() {
        return !messages.isEmpty();
    }

    /** One whole message, or null at once when none waits. */
    List<byte[]> receiveNow() {
        if (messages.isEmpty() && !closed) {
            if (state == State.READY && !drained) {
                try {
                    readOnce();
                    flush(); // a PONG
                } catch (IOException e) {
                    drop(e.getMessage() == null ? e.toString() : e.getMessage(), true);
                } catch (ZmtpException e) {
                    drop(e.getMessage(), true);
                }
            } else if (selector == null) {
                service();
            }
        }
        return messages.pollFirst();
    }

    @Override
    public void close() {
        closed = true;
        closeChannel();
        messages.clear();
    }

    // ---- the connection --------------------------------------------------------------------------------

    private void connect(long now) {
        if (named) {
            state = State.RESOLVING;
            since = now;
            lookingUp = lookup.start(address.host(), wake);
            return;
        }
        connect(now, address.resolve());
    }

    /**
     * A lookup that has ended connects, or fails; one still running after the connect's 10 s is a failed attempt
     * (its late answer is not waited for).
     */
    private void lookedUp(long now) {
        CompletableFuture<InetAddress> running = lookingUp;
        if (!running.isDone()) {
            if (now - since > CONNECT_TIMEOUT_NANOS) {
                lookingUp = null;
                drop(
                        "looking up " + address.host() + " took longer than "
                                + TimeUnit.NANOSECONDS.toSeconds(CONNECT_TIMEOUT_NANOS) + " s",
                        true);
            }
            return;
        }
        lookingUp = null;
        InetAddress found;
        try {
            found = running.join();
        } catch (CompletionException e) {
            String problem = e.getCause() instanceof UnknownHostException
                    ? "unknown host " + address.host()
                    : "looking up " + address.host() + " failed: " + e.getCause();
            drop(problem, true);
            return;
        }
        connect(now, address.at(found));
    }

    private void connect(long now, SocketAddress target) {
        try {
            SocketChannel c = address.family() == StandardProtocolFamily.UNIX
                    ? SocketChannel.open(StandardProtocolFamily.UNIX)
                    : SocketChannel.open();
            channel = c;
            c.configureBlocking(false);
            if (address.family() != StandardProtocolFamily.UNIX) {
                c.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
            }
            state = State.CONNECTING;
            since = now;
            if (selector != null) {
                key = c.register(selector, SelectionKey.OP_CONNECT, attachment);
            }
            if (c.connect(target)) {
                service();
            }
        } catch (IOException | IllegalArgumentException | UnsupportedOperationException e) {
            drop(e.getMessage() == null ? e.toString() : e.getMessage(), true);
        }
    }

    /** One read into the poller's buffer, decoded (greeting first, then frames). */
    private void readOnce() throws IOException, ZmtpException {
        ByteBuffer buffer = READ_BUFFER.get();
        buffer.clear();
        int n = channel.read(buffer);
        if (n < 0) {
            // libzmq closes the handshake of a socket type it does not pair with: a SUB's, unless it is a PUB
            drop(
                    state == State.READY
                            ? null
                            : "the peer closed the connection during the handshake (a ZeroMQ socket that is not a"
                                    + " PUB, such as an engine's replay ROUTER, does that to a SUB)",
                    true);
            return;
        }
        drained = selector != null && n < buffer.capacity(); // level-triggered: the selector reports what comes next
        if (n == 0) {
            return;
        }
        heardAt = System.nanoTime();
        buffer.flip();
        completed = false;
        readBytes(buffer);
        // a full read that ends no message is one message larger than a read (a long prompt's batch), not a
        // backlog: a PUB queues messages, so only messages waiting behind a completed one show it holding back
        behind |= n == buffer.capacity() && completed;
    }

    private void readBytes(ByteBuffer buffer) throws ZmtpException {
        if (greetingHave < Zmtp.GREETING_SIZE) {
            int take = Math.min(buffer.remaining(), Zmtp.GREETING_SIZE - greetingHave);
            buffer.get(greeting, greetingHave, take);
            greetingHave += take;
            if (greetingHave < Zmtp.GREETING_SIZE) {
                return;
            }
            peerVersion = Zmtp.checkGreeting(greeting);
            greeting = null;
        }
        reader.feed(buffer, sink);
    }

    private void onCommand(byte[] body) throws ZmtpException {
        String name = Zmtp.commandName(body);
        switch (name) {
            case "READY" -> {
                if (state != State.HANDSHAKE) {
                    throw new ZmtpException("READY after the handshake");
                }
                String type = Zmtp.property(body, "Socket-Type");
                if (type != null && !type.equals("PUB") && !type.equals("XPUB")) {
                    throw new ZmtpException("the peer is a " + type + " socket, not a PUB");
                }
                send(SUBSCRIBE_ALL);
                state = State.READY;
                backoff = FIRST_BACKOFF_NANOS;
                lastProblem = null;
                pingAt = System.nanoTime() + PING_EVERY_NANOS;
                updateInterest();
                link.handshaken();
            }
            case "ERROR" -> throw new ZmtpException("the peer refused the connection: " + Zmtp.errorReason(body));
            case "PING" -> send(Zmtp.pong(body));
            default -> {
                if (state != State.READY) {
                    throw new ZmtpException("expected READY, got " + (name.isEmpty() ? "a malformed command" : name));
                }
                // PONG and commands we do not use: the peer is alive, nothing else to do
            }
        }
    }

    /**
     * A 3.1 peer gets a PING every 5 s whatever flows (its TTL of 15 s makes the peer drop us when they stop, so they
     * must not depend on our own silence: a SUB sends nothing else); it is dropped after 15 s without a byte while
     * we are listening.
     */
    private void heartbeat(long now) {
        if (peerVersion < 31) {
            return;
        }
        if (!wantRead || !messages.isEmpty()) {
            heardAt = now; // not listening: its silence is ours
        } else if (now - heardAt > SILENCE_NANOS) {
            drop("no answer to heartbeats for 15 s", true);
            return;
        }
        if (now - pingAt >= 0) {
            pingAt = now + PING_EVERY_NANOS;
            send(Zmtp.ping((int) (SILENCE_NANOS / 100_000_000L)));
            try {
                flush();
            } catch (IOException e) {
                drop(e.getMessage() == null ? e.toString() : e.getMessage(), true);
            }
        }
    }

    private void send(byte[] bytes) {
        if (out == null || !out.hasRemaining()) {
            out = ByteBuffer.wrap(bytes);
        } else {
            ByteBuffer joined = ByteBuffer.allocate(out.remaining() + bytes.length);
            joined.put(out).put(bytes).flip();
            out = joined;
        }
    }

    /** Writes what waits to go out (called after reads and from the selector, never while decoding). */
    private void flush() throws IOException {
        if (out != null && channel != null && channel.isConnected()) {
            channel.write(out);
            if (!out.hasRemaining()) {
                out = null;
            }
        }
        updateInterest();
    }

    private void updateInterest() {
        if (key == null || !key.isValid()) {
            return;
        }
        int ops = switch (state) {
            case IDLE, RESOLVING -> 0;
            case CONNECTING -> SelectionKey.OP_CONNECT;
            case HANDSHAKE -> SelectionKey.OP_READ;
            case READY -> wantRead ? SelectionKey.OP_READ : 0;
        };
        if (out != null && state != State.CONNECTING) {
            ops |= SelectionKey.OP_WRITE;
        }
        if (key.interestOps() != ops) {
            key.interestOps(ops);
        }
    }

    /**
     * Closes the connection and schedules the next one ({@code backOff}: after the growing wait, else at once). Whole
     * messages already read stay; a partly read one is gone with the connection, as in ZeroMQ.
     */
    private void drop(String problem, boolean backOff) {
        closeChannel();
        reader.reset();
        link.disconnected();
        if (closed) {
            return;
        }
        long now = System.nanoTime();
        reconnectAt = backOff ? now + backoff : now;
        if (backOff) {
            backoff = Math.min(MAX_BACKOFF_NANOS, backoff * 2);
        }
        if (problem != null) {
            link.attemptFailed(problem);
        }
        if (problem != null && !problem.equals(lastProblem)) {
            lastProblem = problem;
            LOG.log(System.Logger.Level.INFO, "{0}: {1}; connecting again", endpoint, problem);
        }
    }

    private void closeChannel() {
        state = State.IDLE;
        greeting = null;
        out = null;
        peerVersion = 0;
        if (channel != null) {
            try {
                channel.close(); // also cancels its key
            } catch (IOException e) {
                LOG.log(System.Logger.Level.DEBUG, "closing a SUB connection failed", e);
            }
            channel = null;
            key = null;
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = new byte[a.length + b.length];
        System.arraycopy(a, 0, c, 0, a.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
