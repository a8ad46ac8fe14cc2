package io.kvindexer.indexer.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.http.Status;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The body deadline's watchdog never waits on a client: a connection whose 408 cannot be written (its client stopped
 * reading, so the write blocks) must not hold up the 408 of another connection, and its own handler is still freed.
 * The connections here are real threads blocked as a body read blocks (until interrupted); the responses stand in
 * for Helidon's, one of them with a send that blocks, as a socket write to a full receive window does. (A real
 * socket cannot be brought to that point reliably: the kernel's buffers must be full to within the 408's size.)
 */
class BodyDeadlineTest {

    private static final Duration TIMEOUT = Duration.ofMillis(300);
    private static final long PATIENCE_S = 30;

    @Test
    void aClientThatDoesNotReadDoesNotStallOtherDeadlines() throws Exception {
        CountDownLatch stuckSendEntered = new CountDownLatch(1);
        CountDownLatch releaseStuckSend = new CountDownLatch(1);
        Connection stuck = new Connection(response(new AtomicInteger(), () -> {
            stuckSendEntered.countDown();
            awaitUninterruptibly(releaseStuckSend); // a write to a client whose window is full
        }));
        try {
            stuck.start();
            assertThat(stuckSendEntered.await(PATIENCE_S, TimeUnit.SECONDS))
                    .as("the stalled body's 408 is being written")
                    .isTrue();

            // the first 408 is stuck: a second connection's deadline must still fire, answer and free its reader
            AtomicInteger status = new AtomicInteger();
            Connection other = new Connection(response(status, () -> {}));
            other.start();
            assertThat(other.freed.await(PATIENCE_S, TimeUnit.SECONDS))
                    .as("the second connection's reader was freed while the first 408 is stuck")
                    .isTrue();
            assertThat(status.get()).isEqualTo(408);
            assertThat(other.timedOut.get()).isTrue();

            // and the stuck connection's reader is freed too (in Helidon that closes the socket, ending the write)
            assertThat(stuck.freed.await(PATIENCE_S, TimeUnit.SECONDS))
                    .as("the reader behind the stuck 408 was freed")
                    .isTrue();
        } finally {
            releaseStuckSend.countDown();
        }
    }

    /** A connection thread: the deadline filter around a handler that arms it and blocks as a body read does. */
    private static final class Connection {
        final CountDownLatch freed = new CountDownLatch(1);
        final AtomicBoolean timedOut = new AtomicBoolean();
        private final RoutingResponse res;

        Connection(RoutingResponse res) {
            this.res = res;
        }

        void start() {
            FilterChain handler = () -> {
                BodyDeadline deadline = BodyDeadline.current();
                deadline.arm();
                try {
                    new CountDownLatch(1).await(); // the body never comes
                } catch (InterruptedException e) {
                    timedOut.set(deadline.timedOut());
                    deadline.disarm();
                    freed.countDown();
                }
            };
            RoutingRequest req = stub(RoutingRequest.class, (m, a) -> null);
            Thread.ofVirtual().start(() -> BodyDeadline.filter(TIMEOUT).filter(handler, req, res));
        }
    }

    /** A response that records the status it is sent with and runs {@code onSend} in its send. */
    private static RoutingResponse response(AtomicInteger status, Runnable onSend) {
        AtomicInteger pending = new AtomicInteger();
        AtomicBoolean sent = new AtomicBoolean();
        return stub(RoutingResponse.class, (m, args) -> switch (m) {
            case "status" -> {
                if (args != null && args.length == 1 && args[0] instanceof Status s) {
                    pending.set(s.code());
                }
                yield null;
            }
            case "send" -> {
                sent.set(true);
                onSend.run();
                status.set(pending.get());
                yield null;
            }
            case "isSent" -> sent.get();
            default -> null;
        });
    }

    @FunctionalInterface
    private interface Answer {
        Object apply(String method, Object[] args);
    }

    private static <T> T stub(Class<T> type, Answer answer) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, m, args) -> {
            Object out = answer.apply(m.getName(), args);
            if (out == null && m.getReturnType() == boolean.class) {
                return false;
            }
            if (out == null && m.getReturnType() == int.class) {
                return System.identityHashCode(proxy);
            }
            return out;
        }));
    }

    private static void awaitUninterruptibly(CountDownLatch latch) {
        boolean interrupted = false;
        while (true) {
            try {
                latch.await();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
