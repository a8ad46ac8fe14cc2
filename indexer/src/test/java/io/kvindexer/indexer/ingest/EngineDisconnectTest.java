package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An engine that stops and comes back on the same port, over real sockets: the listener's SUB reconnects by itself,
 * and its snapshot says when the connection is down (Dynamo's status stays {@code active}).
 */
class EngineDisconnectTest {

    private static final long INSTANCE = 42;
    private static final Duration NOTICE = Duration.ofSeconds(5);
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    final TestResources resources = new TestResources();

    private final RecordingSink sink = new RecordingSink();
    private final CountingMetrics metrics = new CountingMetrics();
    private final SequenceWatermark watermark = new SequenceWatermark();

    @Test
    void aStoppedEngineIsReportedDisconnectedAndARestartedOneConnectedAgain() throws Exception {
        String endpoint = "tcp://127.0.0.1:" + freePort();
        String replayEndpoint = "tcp://127.0.0.1:" + freePort();
        EngineSimulator first = resources.simulatorAt(endpoint, replayEndpoint);
        EngineListener listener = resources.listener(
                new ListenerSpec(INSTANCE, 0, endpoint, replayEndpoint),
                watermark,
                sink,
                metrics.options().with(o -> o.handshakeTimeout = Duration.ofMillis(300)));
        Subscriptions.await(listener, first, 1);
        await().atMost(PATIENCE).until(() -> listener.snapshot().connected());
        for (int i = 0; i < 3; i++) {
            first.storeSequence(tokens(i * 100, 8), 4).join(); // seqs 0..2
        }
        await().atMost(PATIENCE).until(() -> watermark.get() == 2);
        assertThat(listener.snapshot())
                .usingRecursiveComparison()
                .ignoringFields("exactness") // ExactnessTest's
                .isEqualTo(new ListenerSnapshot(endpoint, ListenerStatus.ACTIVE, null, true, null));

        // the link keeps whole milliseconds: a drop within this same millisecond must still count as after it
        Instant beforeStop = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        first.close();
        await().atMost(NOTICE).until(() -> listener.snapshot().disconnected());
        ListenerSnapshot down = listener.snapshot();
        assertThat(down.status()).as("Dynamo's status is kept").isEqualTo(ListenerStatus.ACTIVE);
        assertThat(down.connected()).isFalse();
        assertThat(down.disconnectedSince()).isBetween(beforeStop, Instant.now());
        assertThat(down.lastError())
                .isEqualTo("engine connection lost at " + down.disconnectedSince()
                        + "; reconnecting (events are missed meanwhile)");
        assertThat(listener.lastError()).isEqualTo(down.lastError());
        assertThat(metrics.get("disconnects")).isEqualTo(1);

        // something takes the port that accepts TCP but never handshakes: still down, since the same moment
        try (ServerSocket silent = bind(endpoint)) {
            List<Socket> accepted = acceptAll(silent);
            await().atMost(PATIENCE).until(() -> metrics.get("handshake.retries") >= 1);
            assertThat(listener.snapshot())
                    .usingRecursiveComparison()
                    .ignoringFields("connectError")
                    .isEqualTo(down);
            assertThat(listener.snapshot().connectError())
                    .startsWith("connected, but no ZeroMQ handshake within 300 ms");
            synchronized (accepted) {
                assertThat(accepted).isNotEmpty();
                for (Socket s : accepted) {
                    s.close();
                }
            }
        }
        assertThat(metrics.get("disconnects"))
                .as("a connect that never handshook is no new disconnect")
                .isEqualTo(1);

        EngineSimulator second =
                resources.simulatorAt(endpoint, replayEndpoint); // the engine process comes back, from seq 0
        Subscriptions.await(listener, second, 1);
        await().atMost(PATIENCE).until(() -> listener.snapshot().connected());
        assertThat(listener.snapshot())
                .usingRecursiveComparison()
                .ignoringFields("exactness") // ExactnessTest's
                .isEqualTo(new ListenerSnapshot(endpoint, ListenerStatus.ACTIVE, null, true, null));
        second.storeSequence(tokens(5000, 8), 4).join();
        second.storeSequence(tokens(6000, 8), 4).join();
        await().atMost(PATIENCE).until(() -> watermark.get() == 1);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(second.groundTruth()));
        assertThat(metrics.get("restarts")).isEqualTo(1);

        // our own pause closes the socket: no disconnect counted, and no socket, so not connected
        assertThat(listener.pause()).isTrue();
        assertThat(listener.snapshot())
                .usingRecursiveComparison()
                .ignoringFields("exactness") // ExactnessTest's
                .isEqualTo(new ListenerSnapshot(endpoint, ListenerStatus.PAUSED, null, false, null));
        Thread.sleep(300);
        assertThat(metrics.get("disconnects")).isEqualTo(1);
    }

    @Test
    void anEngineThatRestartedWhileDisconnectedLosesItsOldBlocksAtTheReconnect() throws Exception {
        String endpoint = "tcp://127.0.0.1:" + freePort();
        String replayEndpoint = "tcp://127.0.0.1:" + freePort();
        EngineSimulator first = resources.simulatorAt(endpoint, replayEndpoint);
        EngineListener listener = resources.listener(
                new ListenerSpec(INSTANCE, 0, endpoint, replayEndpoint), watermark, sink, metrics.options());
        Subscriptions.await(listener, first, 1);
        for (int i = 0; i < 3; i++) {
            first.storeSequence(tokens(i * 100, 8), 4).join(); // seqs 0..2
        }
        await().atMost(PATIENCE).until(() -> watermark.get() == 2);
        first.close();
        await().atMost(NOTICE).until(() -> listener.snapshot().disconnected());

        EngineSimulator second = resources.simulatorAt(endpoint, replayEndpoint); // a new process, from seq 0
        second.dropLive(1); // its seq 0 is published before the listener is back: only its buffer has it
        second.storeSequence(tokens(5000, 8), 4).join();
        // and then it stays idle: no live batch shows that the seq went back
        await().atMost(PATIENCE).until(() -> listener.snapshot().connected());
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(second.groundTruth()));
        await().atMost(PATIENCE).until(() -> watermark.get() == 0);
        assertThat(metrics.get("restarts")).isEqualTo(1);
        assertThat(second.replays().starts())
                .as("from the watermark itself, then from 0 once nothing came back")
                .startsWith(2L, 0L);
        await().atMost(PATIENCE).until(() -> listener.exactness().read().state() == ExactnessState.EXACT);
    }

    /**
     * A network blip while the engine runs: what it published while the link was down never arrived, and an engine
     * quiet since then would show no gap. The listener catches up as soon as the link is back (it used to claim the
     * removed block, exact, until the engine's next batch).
     */
    @Test
    void whatTheEngineSentWhileTheLinkWasDownIsCaughtUpWhenItIsBack() throws Exception {
        EngineSimulator engine =
                resources.simulatorAt("tcp://127.0.0.1:" + freePort(), "tcp://127.0.0.1:" + freePort());
        try (CuttableProxy proxy = new CuttableProxy(port(engine.endpoint()))) {
            EngineListener listener = resources.listener(
                    new ListenerSpec(INSTANCE, 0, proxy.endpoint(), engine.replayEndpoint()),
                    watermark,
                    sink,
                    metrics.options());
            int[] first = tokens(0, 8);
            linkUpWithSeq0Applied(listener, engine, first);

            proxy.cut();
            await().atMost(NOTICE).until(() -> listener.snapshot().disconnected());
            engine.publish(EngineSimulator.removed(EngineSimulator.sequenceHashes(first, 4, null), "GPU"))
                    .join(); // seq 1, lost
            engine.storeSequence(tokens(100, 8), 4).join(); // seq 2, lost; then the engine is quiet
            proxy.restore();

            await().atMost(PATIENCE)
                    .untilAsserted(
                            () -> assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(engine.groundTruth()));
            assertThat(watermark.get()).isEqualTo(2); // seqs 1 and 2 came by replay: the engine sent nothing since
            await().atMost(PATIENCE).until(() -> exactness(listener) == ExactnessState.EXACT);
        }
    }

    /**
     * Without a replay endpoint nothing can be asked for: back from a blip, the listener is not exact until the
     * engine's next batch shows whether any were missed (here none: exact again; a gap would drop the blocks).
     */
    @Test
    void withoutAReplayEndpointAListenerBackFromABlipIsNotExactUntilTheNextBatch() throws Exception {
        EngineSimulator engine = resources.simulatorAt("tcp://127.0.0.1:" + freePort(), null);
        try (CuttableProxy proxy = new CuttableProxy(port(engine.endpoint()))) {
            EngineListener listener = resources.listener(
                    new ListenerSpec(INSTANCE, 0, proxy.endpoint(), null), watermark, sink, metrics.options());
            linkUpWithSeq0Applied(listener, engine, tokens(0, 8));
            assertThat(exactness(listener)).isEqualTo(ExactnessState.EXACT);

            proxy.cut();
            await().atMost(NOTICE).until(() -> listener.snapshot().disconnected());
            proxy.restore();
            await().atMost(PATIENCE).until(() -> listener.snapshot().connected());
            assertThat(listener.snapshot().exactness().state()).isEqualTo(ExactnessState.REPLAYING);
            assertThat(listener.snapshot().exactness().reason()).startsWith("reconnected: no replay endpoint");

            Subscriptions.await(listener, engine, 2); // the PUB knows the new connection
            engine.storeSequence(tokens(100, 8), 4).join(); // seq 1: nothing was missed
            await().atMost(PATIENCE).until(() -> watermark.get() == 1);
            await().atMost(PATIENCE).until(() -> exactness(listener) == ExactnessState.EXACT);
            assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(engine.groundTruth());
        }
    }

    private void linkUpWithSeq0Applied(EngineListener listener, EngineSimulator engine, int[] tokens) {
        Subscriptions.await(listener, engine, 1);
        await().atMost(PATIENCE).until(() -> listener.snapshot().connected());
        await().atMost(PATIENCE).until(() -> exactness(listener) == ExactnessState.EXACT); // the join is over
        engine.storeSequence(tokens, 4).join(); // seq 0
        await().atMost(PATIENCE).until(() -> watermark.get() == 0);
    }

    private static ExactnessState exactness(EngineListener listener) {
        return listener.snapshot().exactness().state();
    }

    private static int port(String endpoint) {
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    @Test
    void anEngineThatNeverCameUpIsNotConnectedButNotDisconnectedEither() throws Exception {
        String endpoint = "tcp://127.0.0.1:" + freePort();
        EngineListener listener =
                resources.listener(new ListenerSpec(INSTANCE, 0, endpoint, null), watermark, sink, metrics.options());
        await().atMost(PATIENCE).until(() -> listener.status() == ListenerStatus.ACTIVE);
        Thread.sleep(500);
        assertThat(listener.snapshot())
                .usingRecursiveComparison()
                .ignoringFields("exactness", "connectError") // ExactnessTest's; below
                // running (ACTIVE inside), shown pending until its first connection, as Dynamo documents
                .isEqualTo(new ListenerSnapshot(endpoint, ListenerStatus.PENDING, null, false, null));
        assertThat(listener.snapshot().connectError())
                .as("why it is not connected")
                .containsIgnoringCase("refused");
        assertThat(metrics.get("disconnects")).isZero();
    }

    private static ServerSocket bind(String endpoint) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(
                InetAddress.getLoopbackAddress(), Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1))));
        return s;
    }

    /** Accepts every connection and never answers one; the list is guarded by itself. */
    private static List<Socket> acceptAll(ServerSocket server) {
        List<Socket> accepted = new ArrayList<>();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                while (true) {
                    Socket s = server.accept();
                    synchronized (accepted) {
                        accepted.add(s);
                    }
                }
            } catch (IOException ignored) {
                // the server closed at the end of its block
            }
        });
        return accepted;
    }

    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0)) {
            return probe.getLocalPort();
        }
    }

    private static int[] tokens(int from, int count) {
        return IntStream.range(from, from + count).toArray();
    }
}
