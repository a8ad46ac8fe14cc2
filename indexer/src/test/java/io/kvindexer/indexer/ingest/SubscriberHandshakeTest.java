package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * The handshake watch on real sockets: a ZMTP peer handshakes (the link is up, and down once the peer goes); a TCP
 * peer that never answers gets a new socket.
 */
class SubscriberHandshakeTest {

    @Test
    void aRealPublisherHandshakesAndNothingIsRemade() {
        try (ZContext context = new ZContext(1)) {
            ZMQ.Socket pub = context.createSocket(SocketType.PUB);
            int port = pub.bindToRandomPort("tcp://127.0.0.1");
            AtomicInteger remade = new AtomicInteger();
            AtomicInteger lost = new AtomicInteger();
            EngineLink link = new EngineLink(System::currentTimeMillis, lost::incrementAndGet, () -> {});
            Subscriber sub = open("tcp://127.0.0.1:" + port, remade, link);
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                pub.send("x");
                return receive(sub) != null;
            });
            for (int i = 0; i < 10; i++) {
                receive(sub); // 500 ms of polls, past the deadline
            }
            assertThat(remade.get()).isZero();
            assertThat(link.state()).isEqualTo(new EngineLink.State(true, null, null));
            assertThat(lost.get()).isZero();
            pub.close(); // the engine goes away: the SUB notices though it will reconnect by itself
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                receive(sub);
                return lost.get() == 1;
            });
            assertThat(link.state().connected()).isFalse();
            assertThat(link.state().downSince()).isNotNull();
            sub.close();
        }
    }

    @Test
    void aConnectionThatNeverHandshakesIsMadeAgainAndCounted() throws Exception {
        try (SilentServer silent = new SilentServer()) {
            AtomicInteger remade = new AtomicInteger();
            EngineLink link = new EngineLink(System::currentTimeMillis, () -> {}, () -> {});
            Subscriber sub = open(silent.endpoint(), remade, link);
            await().atMost(Duration.ofSeconds(20)).until(() -> {
                receive(sub);
                return remade.get() >= 2;
            });
            assertThat(silent.acceptedAt().size())
                    .as("each new socket connects again")
                    .isGreaterThanOrEqualTo(2);
            assertThat(link.state().connected())
                    .as("a TCP connect is not a connection")
                    .isFalse();
            assertThat(link.state().downSince()).isNull();
            assertThat(link.state().attemptProblem())
                    .as("shown in /workers as connect_error")
                    .startsWith("connected, but no ZeroMQ handshake within ");
            sub.close();
        }
    }

    /** What a poller does for one connection per turn: its deadlines, read one message, else wait 50 ms. */
    private static List<byte[]> receive(Subscriber sub) {
        sub.tick();
        List<byte[]> message = sub.receiveNow();
        if (message == null) {
            LockSupport.parkNanos(50_000_000L);
        }
        return message;
    }

    /** A subscriber of {@code endpoint} with a 300 ms handshake deadline, counting remade sockets; opened. */
    private static Subscriber open(String endpoint, AtomicInteger remade, EngineLink link) {
        Subscriber sub = new Subscriber(null, null, endpoint, Duration.ofMillis(300), remade::incrementAndGet, link);
        sub.open();
        return sub;
    }
}
