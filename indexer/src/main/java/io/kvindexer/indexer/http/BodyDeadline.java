package io.kvindexer.indexer.http;

import io.helidon.http.HeaderValues;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.helidon.webserver.http.ServerRequest;
import io.helidon.webserver.http.ServerResponse;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * A bound on how long reading one request body may take, so a client that sends headers and part of a body and then
 * stalls (without closing) cannot hold a connection thread forever. Helidon 4.5 sets no read timeout on the sockets
 * its server accepts (SocketOptions.readTimeout is applied by its clients only), so the bound lives here:
 * {@link RequestBody} arms it when it admits a body and disarms it at the body's end (or when it stops reading),
 * before the handler acts on the request. On expiry the watchdog answers 408 with a JSON error and
 * {@code Connection: close}, then interrupts the blocked handler thread, whose interruptible socket read closes the
 * connection.
 */
final class BodyDeadline {

    private static final ScheduledThreadPoolExecutor WATCHDOG = watchdog();

    private enum State {
        IDLE,
        READING,
        DONE,
        TIMED_OUT
    }

    private final Duration timeout;
    private final ServerResponse res;
    private final Thread reader;
    private State state = State.IDLE;
    private ScheduledFuture<?> expiry;

    private BodyDeadline(Duration timeout, ServerResponse res, Thread reader) {
        this.timeout = timeout;
        this.res = res;
        this.reader = reader;
    }

    /** The filter that gives every request its (not yet armed) deadline. */
    static Filter filter(Duration timeout) {
        return new Filter() {
            @Override
            public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
                req.context().register(new BodyDeadline(timeout, res, Thread.currentThread()));
                chain.proceed();
            }
        };
    }

    /** The request's deadline, or null when the routing has none (routing tests without the filter). */
    static BodyDeadline of(ServerRequest req) {
        return req.context().get(BodyDeadline.class).orElse(null);
    }

    /** Starts the clock; called by the request's handler thread before its first body read. */
    synchronized void arm() {
        if (state == State.IDLE) {
            state = State.READING;
            expiry = WATCHDOG.schedule(this::expire, timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    /** Stops the clock once the body is read (or reading failed); clears an interrupt the watchdog may have sent. */
    synchronized void disarm() {
        if (state == State.READING) {
            state = State.DONE;
            expiry.cancel(false);
        } else if (state == State.TIMED_OUT && Thread.currentThread() == reader) {
            Thread.interrupted(); // the interrupt was for the stalled read, not for whatever runs next
        }
    }

    /** True once the watchdog answered 408: the handler must not answer again. */
    synchronized boolean timedOut() {
        return state == State.TIMED_OUT;
    }

    /** Runs on the watchdog thread while the handler is blocked in a body read (the lock keeps them apart). */
    private synchronized void expire() {
        if (state != State.READING) {
            return;
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

    private static ScheduledThreadPoolExecutor watchdog() {
        ScheduledThreadPoolExecutor ex = new ScheduledThreadPoolExecutor(
                1, Thread.ofPlatform().daemon().name("body-deadline").factory());
        ex.setRemoveOnCancelPolicy(true); // one task per body: cancelled ones must not pile up until their time
        return ex;
    }
}
