package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.ingest.IngestMetrics.ReplayResult;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.zeromq.SocketType;
import org.zeromq.ZMQ;

/**
 * A subscriber or a replay DEALER that connects to a free port of its own host before the engine binds it can be given
 * that port as its own and reach itself; it must tell, and let the port go (a test's engine once failed to bind
 * because of it).
 */
class SelfConnectTest {

    @Test
    void aSocketConnectedToItselfIsToldFromOneConnectedToAListener() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, loopback)) {
            port = probe.getLocalPort();
        }
        InetSocketAddress free = new InetSocketAddress(loopback, port);
        // bound to the port it connects to, with nothing listening: TCP's simultaneous open makes it its own peer
        try (SocketChannel self = SocketChannel.open()) {
            self.bind(free);
            self.connect(free);
            assertThat(Subscriber.connectedToItself(self)).isTrue();
        }
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress(loopback, 0));
                SocketChannel client = SocketChannel.open(listener.getLocalAddress())) {
            assertThat(Subscriber.connectedToItself(client)).isFalse();
        }
    }

    /**
     * A DEALER that reached itself reads its own request back. Stood in for here by the engine's ROUTER echoing the
     * first request to its sender (what the replay client reads is the same), then answering the next one as an
     * engine does. The client must take the echo for no answer: ask again on a fresh DEALER, neither fail nor lose
     * the range.
     */
    @Test
    void aReplayThatReadsItsOwnRequestAsksAgainAndLosesNothing() throws Exception {
        ZMQ.Socket router = ZmqContext.shared().createSocket(SocketType.ROUTER);
        router.setLinger(0);
        router.setReceiveTimeOut(30_000);
        int port = router.bindToRandomPort("tcp://127.0.0.1");
        List<byte[]> requests = new CopyOnWriteArrayList<>();
        List<String> senders = new CopyOnWriteArrayList<>();
        // a thread of its own: the replay below blocks the test's
        Thread engine = Thread.ofPlatform().daemon().start(() -> {
            try {
                List<byte[]> first = Frames.receive(router); // [identity, "", seq]
                senders.add(HexFormat.of().formatHex(first.get(0)));
                requests.add(first.get(2));
                Frames.send(router, first.toArray(byte[][]::new));
                List<byte[]> second = Frames.receive(router);
                senders.add(HexFormat.of().formatHex(second.get(0)));
                requests.add(second.get(2));
                for (long seq = Frames.readSeq(second.get(2)); seq < 10; seq++) {
                    Frames.send(router, second.get(0), Frames.EMPTY, Frames.seqBytes(seq), new byte[] {(byte) seq});
                }
                Frames.send(router, second.get(0), Frames.EMPTY, Frames.seqBytes(Frames.END_SEQ), new byte[0]);
            } finally {
                router.close();
            }
        });
        ListenerOptions options = ListenerOptions.defaults().with(o -> o.replayTimeout = Duration.ofSeconds(30));
        ReplayClient client = new ReplayClient(
                ZmqContext.shared(), "tcp://127.0.0.1:" + port, options.replaySettings(), () -> false, () -> {});
        RecordingTarget target = new RecordingTarget();

        ReplayClient.Outcome outcome = client.replay(0, 10, target);
        engine.join(10_000);

        assertThat(target.lost).as("nothing reported lost").isEmpty();
        assertThat(outcome.result()).isEqualTo(ReplayResult.OK);
        assertThat(target.taken)
                .containsExactlyElementsOf(LongStream.range(0, 10).boxed().toList());
        assertThat(requests)
                .as("the same request, asked again")
                .hasSize(2)
                .allSatisfy(r -> assertThat(Frames.readSeq(r)).isZero());
        assertThat(senders.get(1)).as("on a fresh DEALER").isNotEqualTo(senders.get(0));
    }
}
