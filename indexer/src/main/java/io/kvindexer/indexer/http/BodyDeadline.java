package io.kvindexer.indexer.http;

import io.helidon.http.HeaderValues;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.webserver.http.ServerResponse;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * A bound on how long reading one request body may take, so a client that sends headers and part of a body and then
 * stalls (without closing) cannot hold a connection thread forever. Helidon 4.5 sets no read timeout on the sockets
 * its server accepts (SocketOptions.readTimeout is applied by its clients only), so the bound lives here:
 * {@link RequestBody} arms it when it admits a body and disarms it at the body's end (or when it stops reading),
 * before the handler acts on the request. On expiry the watchdog answers 408 with a JSON error and
 * {@code Connection: close}, then interrupts the blocked handler thread, whose interruptible socket read closes the
 * connection.
 *
 * <p>Helidon serves each connection on a thread of its own, so a connection keeps one deadline for all its requests
 * (found through a thread local, not the request's context), and one watchdog thread for the whole process sleeps
 * until the earliest armed deadline: arming and disarming write two fields, no task is scheduled or cancelled per
 * request. A deadline that expires sooner than the watchdog's next wake (a shorter timeout) wakes it.
 */
final class BodyDeadline {

    /** Every connection thread's deadline; the watchdog drops those whose thread has ended. */
    private static final Set<BodyDeadline> ALL = ConcurrentHashMap.newKeySet();

    private static final ThreadLocal<BodyDeadline> CURRENT = new ThreadLocal<>();
    private static final Thread WATCHDOG =
            Thread.ofPlatform().daemon().name("body-deadline").start(BodyDeadline::watch);
    /** When the watchdog wakes next ({@link System#nanoTime}), valid when it is not scanning. */
    private static volatile long nextWake;

    private static volatile boolean scanning;

    private enum State {
        IDLE,
        READING,
        DONE,
        TIMED_OUT
    }

    private final Thread reader;
    private Duration timeout;
    private ServerResponse res; // the current request's; null between requests
    private volatile State state = State.IDLE;
    private volatile long expiresAt;

    private BodyDeadline(Thread reader) {
        this.reader = reader;
    }

    /** The filter that gives every request its (not yet armed) deadline. */
    static Filter filter(Duration timeout) {
        return new Filter() {
            @Override
            public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
                BodyDeadline d = CURRENT.get();
                if (d == null) {
                    d = new BodyDeadline(Thread.currentThread());
                    CURRENT.set(d);
                    ALL.add(d);
                }
                d.begin(timeout, res);
                try {
                    chain.proceed();
                } finally {
                    d.end();
                }
            }
        };
    }

    /** The deadline of the request this thread is handling, or null when the routing has none (routing tests). */
    static BodyDeadline current() {
        BodyDeadline d = CURRENT.get();
        return d != null && d.res != null ? d : null;
    }

    private synchronized void begin(Duration timeout, ServerResponse res) {
        this.timeout = timeout;
        this.res = res;
        state = State.IDLE;
    }

    private synchronized void end() {
        res = null; // not kept alive until the connection's next request
        state = State.IDLE;
    }

    /** Starts the clock; called by the request's handler thread before its first body read. */
    synchronized void arm() {
        if (state == State.IDLE) {
            long at = System.nanoTime() + timeout.toNanos();
            expiresAt = at;
            state = State.READING;
            if (scanning || at - nextWake < 0) {
                LockSupport.unpark(WATCHDOG);
            }
        }
    }

    /** Stops the clock once the body is read (or reading failed); clears an interrupt the watchdog may have sent. */
    synchronized void disarm() {
        if (state == State.READING) {
            state = State.DONE;
        } else if (state == State.TIMED_OUT && Thread.currentThread() == reader) {
            Thread.interrupted(); // the interrupt was for the stalled read, not for whatever runs next
        }
    }

    /** True once the watchdog answered 408: the handler must not answer again. */
    synchronized boolean timedOut() {
        return state == State.TIMED_OUT;
    }

    /** Expires the deadlines due, then sleeps until the earliest one still armed (or until a sooner one wakes it). */
    private static void watch() {
        while (true) {
            scanning = true; // an arm from now on is seen by this scan or wakes the watchdog
            long now = System.nanoTime();
            long earliest = now + Duration.ofMinutes(1).toNanos();
            for (BodyDeadline d : ALL) {
                if (!d.reader.isAlive()) {
                    ALL.remove(d);
                } else if (d.state == State.READING) {
                    long at = d.expiresAt;
                    if (at - now <= 0) {
                        d.expire(now);
                    } else if (at - earliest < 0) {
                        earliest = at;
                    }
                }
            }
            nextWake = earliest;
            scanning = false;
            LockSupport.parkNanos(earliest - System.nanoTime());
        }
    }

    /** Runs on the watchdog thread while the handler is blocked in a body read (the lock keeps them apart). */
    private synchronized void expire(long now) {
        if (state != State.READING || expiresAt - now > 0) {
            return; // the body ended, or the connection's next request armed it again meanwhile
        }
        state = State.TIMED_OUT;
        try {
            res.header(HeaderValues.CONNECTION_CLOSE);
            JsonOut.error(
                    res,
                    408,
                    "request body not received within " + timeout.toMillis() + " ms (--request-read-timeout-ms)");
        } catch (RuntimeException e) {
            // the connection may already be gone; the interrupt below still frees the handler
        }
        reader.interrupt();
    }
}
