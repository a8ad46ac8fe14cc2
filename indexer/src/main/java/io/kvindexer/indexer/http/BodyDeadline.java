package io.kvindexer.indexer.http;

import io.helidon.common.buffers.BufferData;
import io.helidon.http.HeaderValues;
import io.helidon.http.Headers;
import io.helidon.http.HttpPrologue;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.webserver.http.ServerResponse;
import io.helidon.webserver.http1.Http1ConnectionListener;
import io.kvindexer.indexer.common.Watchdog;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A bound on how long reading one request body may take, so a client that sends headers and part of a body and then
 * stalls (without closing) cannot hold a connection thread forever. Helidon 4.5 sets no read timeout on the sockets
 * its server accepts (SocketOptions.readTimeout is applied by its clients only), so the bound lives here:
 * {@link RequestBody} arms it when it admits a body and disarms it at the body's end (or when it stops reading),
 * before the handler acts on the request. On expiry a virtual thread of its own answers 408 with a JSON error and
 * {@code Connection: close}, then interrupts the blocked handler thread, whose interruptible socket read closes the
 * connection. The watchdog itself never writes to a client: one that stops reading (its receive window full) would
 * block the write, and with it every other connection's deadline. If the 408 is still not written after another
 * timeout, the watchdog interrupts the handler anyway, which closes the socket and so ends the stuck write.
 *
 * <p>The same deadline bounds a request's head (request line and headers), which Helidon reads with no time limit
 * either (its idle connection timeout, minutes, is all that ends a request line that never ends): {@link TimedHttp1}
 * arms it when the first bytes of a request line arrive ({@link #requestLineArriving}), {@link #headerListener}
 * once the request line is in if it was not yet (the line came with the previous request's bytes), and stops it
 * once the headers are. A client that trickles its request line or headers gets the same 408, written straight to
 * the connection (there is no response object yet), and the connection is closed.
 *
 * <p>Helidon serves each connection on a thread of its own, so a connection keeps one deadline for all its requests
 * (found through a thread local, not the request's context), watched by the process's one {@link Watchdog} until
 * the connection ends ({@link #connectionEnded}; the watchdog drops one whose thread has ended anyway).
 */
final class BodyDeadline extends Watchdog.Deadline {

    private static final ThreadLocal<BodyDeadline> CURRENT = new ThreadLocal<>();

    private enum State {
        IDLE,
        LINE,
        HEADERS,
        READING,
        DONE,
        DRAINING,
        TIMED_OUT
    }

    private final Thread reader;
    private Duration timeout;
    private ServerResponse res; // the current request's; null between requests
    private ConnectionContext connection; // while the headers are read: where their 408 goes
    /** armed while LINE, HEADERS, READING or DRAINING (when the head, body or an unread body's rest is late) and once TIMED_OUT (the 408's own time) */
    private volatile State state = State.IDLE;
    /** the reader was interrupted for this time-out (at most once, so no interrupt leaks into a later request) */
    private boolean interrupted; // guarded by this
    /** the 408 was written (or failed to be) */
    private boolean answered; // guarded by this
    /** the connection reads through {@link TimedHttp1}, which says when a drain is over ({@link #awaitingRequest}) */
    private boolean timedReads; // guarded by this

    private BodyDeadline(Thread reader) {
        this.reader = reader;
    }

    /** The filter that gives every request its (not yet armed) deadline. */
    static Filter filter(Duration timeout) {
        return new Filter() {
            @Override
            public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
                BodyDeadline d = ofThisThread();
                d.begin(timeout, res);
                try {
                    chain.proceed();
                } finally {
                    d.end();
                }
            }
        };
    }

    /**
     * The HTTP/1 receive listener that bounds the header section: called on the connection's thread once the
     * request line is read, and again once the headers are.
     */
    static Http1ConnectionListener headerListener(Duration timeout) {
        return new Http1ConnectionListener() {
            @Override
            public void prologue(ConnectionContext ctx, HttpPrologue prologue) {
                ofThisThread().armHeaders(timeout, ctx);
            }

            @Override
            public void headers(ConnectionContext ctx, Headers headers) {
                BodyDeadline d = CURRENT.get();
                if (d != null) {
                    d.headersRead();
                }
            }
        };
    }

    private static BodyDeadline ofThisThread() {
        BodyDeadline d = CURRENT.get();
        if (d == null) {
            d = new BodyDeadline(Thread.currentThread());
            CURRENT.set(d);
        }
        return d;
    }

    /**
     * The connection's thread is done with it (called by {@link TimedHttp1} as the connection ends): the watchdog
     * lets go of its deadline now. Left to the watchdog's next wake (up to a minute), each closed connection's
     * deadline kept its thread, and through it the connection and its buffers, in memory.
     */
    static void connectionEnded() {
        BodyDeadline d = CURRENT.get();
        if (d != null) {
            CURRENT.remove();
            synchronized (d) { // an expiry running now may arm it again: it is retired after that
                d.retire();
            }
        }
    }

    /** The deadline of the request this thread is handling, or null when the routing has none (routing tests). */
    static BodyDeadline current() {
        BodyDeadline d = CURRENT.get();
        return d != null && d.res != null ? d : null;
    }

    private synchronized void begin(Duration timeout, ServerResponse res) {
        this.timeout = timeout;
        this.res = res;
        connection = null;
        state = State.IDLE;
        cancel();
        interrupted = false;
        answered = false;
    }

    private synchronized void end() {
        res = null; // not kept alive until the connection's next request
        if (state != State.DRAINING) {
            state = State.IDLE;
            cancel();
        }
    }

    /**
     * The request was answered with its body not read to its end, and Helidon reads the rest next (to keep the
     * connection): that read gets the deadline too, which on expiry closes the connection (the answer is out). Only
     * where {@link TimedHttp1} says when the read is over; elsewhere (routing tests) it stays as Helidon has it.
     */
    synchronized void drainRest() {
        if (timedReads && state != State.TIMED_OUT) {
            interrupted = false;
            start(State.DRAINING);
        }
    }

    /**
     * The connection waits for its next request line (called by {@link TimedHttp1} on the connection's thread before
     * each read then): a drain of the previous body is over.
     */
    static void awaitingRequest() {
        BodyDeadline d = ofThisThread();
        synchronized (d) {
            d.timedReads = true;
            if (d.state == State.DRAINING) {
                d.state = State.IDLE;
                d.cancel();
            }
        }
    }

    /** Starts the clock; called by the request's handler thread before its first body read. */
    synchronized void arm() {
        if (state == State.IDLE) {
            start(State.READING);
        }
    }

    /**
     * Starts the clock on the head of the connection's next request, as the first bytes of its request line arrive
     * (called by {@link TimedHttp1} on the connection's thread); a clock already running keeps its start.
     */
    static void requestLineArriving(Duration timeout, ConnectionContext connection) {
        BodyDeadline d = ofThisThread();
        synchronized (d) {
            d.timedReads = true;
            if (d.state == State.IDLE || d.state == State.DONE || d.state == State.DRAINING) { // between requests
                d.armHead(timeout, connection, State.LINE);
            }
        }
    }

    /**
     * The request line is in: the clock runs on for the headers, from the line's first bytes, or starts now when
     * none came while the line was awaited (it arrived with the previous request's bytes).
     */
    private synchronized void armHeaders(Duration timeout, ConnectionContext connection) {
        if (state == State.LINE) {
            state = State.HEADERS;
        } else {
            armHead(timeout, connection, State.HEADERS);
        }
    }

    private void armHead(Duration timeout, ConnectionContext connection, State part) {
        this.timeout = timeout;
        this.connection = connection;
        interrupted = false;
        answered = false;
        start(part);
    }

    private synchronized void headersRead() {
        if (state == State.HEADERS) {
            state = State.IDLE;
            connection = null;
            cancel();
        }
    }

    private void start(State reading) {
        state = reading;
        armIn(timeout);
    }

    /**
     * Stops the clock once the body is read (or reading failed); clears an interrupt the watchdog may have sent.
     * A body that ended just as it timed out waits here for the 408 to be written (or for the watchdog to give up
     * on it), so the handler never answers while the 408 is being written.
     */
    synchronized void disarm() {
        if (state == State.READING) {
            state = State.DONE;
            cancel();
        } else if (state == State.TIMED_OUT && Thread.currentThread() == reader) {
            try {
                while (!answered && !interrupted) {
                    wait();
                }
            } catch (InterruptedException e) {
                // the watchdog gave up on the 408; cleared below
            }
            interrupted = true; // none later
            Thread.interrupted(); // the interrupt was for the stalled read, not for whatever runs next
        }
    }

    /** True once the body's time ran out and the 408 is (being) answered: the handler must not answer again. */
    boolean timedOut() {
        return state == State.TIMED_OUT;
    }

    @Override
    protected boolean ownerGone() {
        return !reader.isAlive();
    }

    /**
     * Runs on the watchdog thread while the handler is blocked in a body read (the lock keeps them apart). It only
     * changes state and starts threads or interrupts: nothing here waits on a client.
     */
    @Override
    protected synchronized void expired(long now) {
        if (!due(now)) {
            return; // disarmed, or the connection's next request armed it again meanwhile
        }
        if (state == State.READING) {
            state = State.TIMED_OUT;
            armAt(now + timeout.toNanos()); // the 408's own time to be written
            ServerResponse answer = res;
            String message =
                    "request body not received within " + timeout.toMillis() + " ms (--request-read-timeout-ms)";
            Thread.ofVirtual()
                    .name("body-deadline-408")
                    .start(() -> answer(() -> {
                        answer.header(HeaderValues.CONNECTION_CLOSE);
                        JsonOut.error(answer, 408, message);
                    }));
        } else if (state == State.LINE || state == State.HEADERS) {
            String part = state == State.LINE ? "request line" : "request headers";
            state = State.TIMED_OUT;
            armAt(now + timeout.toNanos());
            ConnectionContext answer = connection;
            byte[] bytes =
                    raw408(part + " not received within " + timeout.toMillis() + " ms (--request-read-timeout-ms)");
            Thread.ofVirtual()
                    .name("header-deadline-408")
                    .start(() -> answer(() -> answer.dataWriter().writeNow(BufferData.create(bytes))));
        } else if (state == State.DRAINING) {
            state = State.TIMED_OUT; // nothing to answer (the request was): the interrupt closes the connection
            answered = true;
            interruptReader();
            cancel();
        } else if (state == State.TIMED_OUT) {
            interruptReader(); // the 408 is stuck (the client does not read): closing the socket ends it
            cancel();
        } else {
            cancel();
        }
    }

    /** On a virtual thread of its own: the 408, then the interrupt that frees the handler and closes the socket. */
    private void answer(Runnable write) {
        try {
            write.run();
        } catch (RuntimeException e) {
            // the connection may already be gone; the interrupt below still frees the handler
        }
        synchronized (this) {
            answered = true;
            notifyAll();
            interruptReader();
        }
    }

    /** A whole 408 answer with the API's JSON error, for a request that has no response object yet. */
    private static byte[] raw408(String message) {
        byte[] body = JsonOut.bytes(JsonOut.errorBody(message));
        String head = "HTTP/1.1 408 Request Timeout\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                + "\r\nConnection: close\r\n\r\n";
        byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[headBytes.length + body.length];
        System.arraycopy(headBytes, 0, all, 0, headBytes.length);
        System.arraycopy(body, 0, all, headBytes.length, body.length);
        return all;
    }

    private synchronized void interruptReader() {
        if (state == State.TIMED_OUT && !interrupted) {
            interrupted = true;
            reader.interrupt();
        }
    }
}
