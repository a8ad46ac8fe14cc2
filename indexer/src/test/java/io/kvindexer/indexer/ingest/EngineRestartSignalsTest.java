package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What a listener can tell about an engine restart it did not see as a seq going back, over real sockets with the
 * simulator as the engine (a PUB, and a ROUTER that answers from its buffer of the exact bytes it published):
 *
 * <ul>
 *   <li>a publisher whose seq starts at the clock (a TensorRT-LLM revision starts at {@code time.time_ns()}): its
 *       first seq is no count of lost batches, and a new process jumps ahead instead of going back;</li>
 *   <li>an engine that restarted during a connection blip and published past the watermark before the listener was
 *       back: its replay of the watermark's seq is another batch than the one applied;</li>
 *   <li>a restart found by the catch-up whose new process's first batches are gone from its buffer: said so, not
 *       taken for a join of a running engine;</li>
 *   <li>an engine that restarts in place after a restart the catch-up found: its seq 0 is stamped after the
 *       watermark's batch.</li>
 * </ul>
 */
class EngineRestartSignalsTest {

    private static final long INSTANCE = 7;
    private static final Duration NOTICE = Duration.ofSeconds(10);
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    final TestResources resources = new TestResources();

    private final RecordingSink sink = new RecordingSink();
    private final CountingMetrics metrics = new CountingMetrics();
    private final SequenceWatermark watermark = new SequenceWatermark();

    @Test
    void aClockStartedSeqCountsOnlyRealGapsAsLostAndItsJumpAheadIsARestart() throws Exception {
        String endpoint = "tcp://127.0.0.1:" + freePort();
        long first = clockNanos();
        EngineSimulator engine = simulator(endpoint, null, first, 10_000);
        EngineListener listener =
                resources.listener(new ListenerSpec(INSTANCE, 0, endpoint, null), watermark, sink, metrics.options());
        Subscriptions.await(listener, engine, 1);
        engine.storeSequence(tokens(0), 4).join(); // seq `first`
        engine.storeSequence(tokens(100), 4).join();
        await().atMost(PATIENCE).until(() -> watermark.get() == first + 1);
        assertThat(metrics.get("lost"))
                .as("a registration's first seq at the clock (%d) is no count of batches this listener lost", first)
                .isZero();

        engine.skip(3); // three batches of this process never sent: really lost
        engine.storeSequence(tokens(200), 4).join();
        await().atMost(PATIENCE).until(() -> watermark.get() == first + 5);
        assertThat(metrics.get("lost")).isEqualTo(3);
        assertThat(metrics.get("restarts")).isZero();

        // a new process of the engine: its seq starts at the clock again, far ahead of the old one's
        engine.close();
        await().atMost(NOTICE).until(() -> listener.snapshot().disconnected());
        long stamped = clockNanos();
        await().atMost(PATIENCE).until(() -> clockNanos() > stamped + 2 * SequenceTracker.CLOCK_MARGIN_NANOS);
        EngineSimulator next = simulator(endpoint, null, clockNanos(), 10_000);
        Subscriptions.await(listener, next, 1);
        next.storeSequence(tokens(300), 4).join();
        await().atMost(PATIENCE).until(() -> watermark.get() == next.nextSeq() - 1);
        assertThat(metrics.get("restarts"))
                .as("the jump ahead is a new process")
                .isEqualTo(1);
        assertThat(metrics.get("lost")).as("and no run of lost batches").isEqualTo(3);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(next.groundTruth()));
    }

    @Test
    void anEngineThatRestartedDuringABlipAndPublishedPastTheWatermarkLosesItsOldBlocks() throws Exception {
        EngineSimulator engine =
                resources.simulatorAt("tcp://127.0.0.1:" + freePort(), "tcp://127.0.0.1:" + freePort());
        try (CuttableProxy proxy = new CuttableProxy(port(engine.endpoint()))) {
            EngineListener listener = listenThrough(proxy, engine.replayEndpoint(), engine);
            await().atMost(PATIENCE).until(() -> exactness(listener) == ExactnessState.EXACT); // the join is over
            storeLive(engine, 3); // seqs 0..2

            cut(proxy, listener);
            engine.restart(); // a new process while the link is down: seq from 0, cache and buffer empty
            for (int b = 0; b < 5; b++) {
                engine.storeSequence(tokens(5000 + b * 100), 4).join(); // seqs 0..4, past the old watermark 2
            }
            int before = engine.replays().starts().size();
            proxy.restore();

            await().atMost(PATIENCE)
                    .untilAsserted(
                            () -> assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(engine.groundTruth()));
            await().atMost(PATIENCE).until(() -> watermark.get() == 4);
            assertThat(metrics.get("restarts")).isEqualTo(1);
            assertThat(engine.replays()
                            .starts()
                            .subList(before, engine.replays().starts().size()))
                    .as("from the watermark itself, whose batch came back another, then from 0")
                    .startsWith(2L, 0L);
            await().atMost(PATIENCE).until(() -> exactness(listener) == ExactnessState.EXACT);
        }
    }

    @Test
    void aClockStartedEngineThatRestartedDuringABlipIsARestartNotALoss() throws Exception {
        String endpoint = "tcp://127.0.0.1:" + freePort();
        String replayEndpoint = "tcp://127.0.0.1:" + freePort();
        long first = clockNanos();
        EngineSimulator engine = simulator(endpoint, replayEndpoint, first, 10_000);
        try (CuttableProxy proxy = new CuttableProxy(port(endpoint))) {
            EngineListener listener = listenThrough(proxy, replayEndpoint, engine);
            await().atMost(PATIENCE).until(() -> exactness(listener) != ExactnessState.REPLAYING); // the join
            engine.storeSequence(tokens(0), 4).join();
            await().atMost(PATIENCE).until(() -> watermark.get() == first);

            cut(proxy, listener);
            engine.close();
            long stamped = clockNanos();
            await().atMost(PATIENCE).until(() -> clockNanos() > stamped + 2 * SequenceTracker.CLOCK_MARGIN_NANOS);
            EngineSimulator next = simulator(endpoint, replayEndpoint, clockNanos(), 10_000);
            next.storeSequence(tokens(300), 4).join(); // nobody listens: only its buffer has them
            next.storeSequence(tokens(400), 4).join();
            proxy.restore();

            await().atMost(PATIENCE)
                    .untilAsserted(
                            () -> assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(next.groundTruth()));
            await().atMost(PATIENCE).until(() -> watermark.get() == next.nextSeq() - 1);
            assertThat(metrics.get("restarts")).isEqualTo(1);
        }
    }

    @Test
    void aRestartFoundByTheCatchUpWhoseFirstBatchesAreGoneSaysSo() throws Exception {
        String endpoint = "tcp://127.0.0.1:" + freePort();
        String replayEndpoint = "tcp://127.0.0.1:" + freePort();
        EngineSimulator engine = simulator(endpoint, replayEndpoint, 0, 10_000);
        try (CuttableProxy proxy = new CuttableProxy(port(endpoint))) {
            EngineListener listener = listenThrough(proxy, replayEndpoint, engine);
            await().atMost(PATIENCE).until(() -> exactness(listener) == ExactnessState.EXACT); // the join is over
            storeLive(engine, 3); // seqs 0..2

            cut(proxy, listener);
            engine.close();
            EngineSimulator next = simulator(endpoint, replayEndpoint, 0, 1); // a buffer of one batch
            next.storeSequence(tokens(5000), 4).join(); // seq 0: gone from the buffer by the next
            next.storeSequence(tokens(5100), 4).join(); // seq 1, below the old watermark; then idle
            proxy.restore();

            await().atMost(PATIENCE).until(() -> metrics.get("restarts") == 1);
            await().atMost(PATIENCE).until(() -> exactness(listener) == ExactnessState.DEGRADED);
            assertThat(listener.snapshot().exactness().reason())
                    .startsWith("the engine restarted and not all it published since can be vouched for")
                    .doesNotContain("joined");
            assertThat(listener.lastError()).startsWith("the engine restarted").doesNotContain("joined");
            await().atMost(PATIENCE)
                    .untilAsserted(() -> assertThat(sink.asGroundTruth(INSTANCE))
                            .as("the old blocks are gone, seq 1 of the new process replayed")
                            .isEqualTo(Map.of(
                                    new EngineSimulator.Holder(0, StorageTier.DEVICE),
                                    Arrays.stream(EngineSimulator.sequenceHashes(tokens(5100), 4, null))
                                            .boxed()
                                            .collect(Collectors.toSet()))));
        }
    }

    /**
     * The engine restarts as a new process while the link is down and publishes seqs 0..2, below the watermark 5,
     * before the listener is back: its catch-up finds nothing from seq 5 on, drops the old blocks and replays 0..2,
     * none of which it sees live. Then the engine restarts once more, in place (the same connection), and its seq 0
     * comes live. Before, the first live seq after a restart a replay found was measured only against the old
     * process's live seqs (5): it went back below them, so it was taken for the start of the new process's stream,
     * and at or below the replay's watermark for a late copy of a replayed batch: skipped, and the listener stayed
     * exact with blocks the engine no longer held (found by {@code RandomFaultTest}, seed 4).
     */
    @Test
    void anEngineThatRestartsInPlaceAfterARestartTheCatchUpFoundIsARestartAgain() throws Exception {
        String endpoint = "tcp://127.0.0.1:" + freePort();
        String replayEndpoint = "tcp://127.0.0.1:" + freePort();
        EngineSimulator engine = simulator(endpoint, replayEndpoint, 0, 10_000);
        try (CuttableProxy proxy = new CuttableProxy(port(endpoint))) {
            EngineListener listener = listenThrough(proxy, replayEndpoint, engine);
            await().atMost(PATIENCE).until(() -> exactness(listener) == ExactnessState.EXACT); // the join is over
            storeLive(engine, 6); // seqs 0..5, live

            cut(proxy, listener);
            engine.close();
            EngineSimulator next = simulator(endpoint, replayEndpoint, 0, 10_000);
            for (int b = 0; b < 3; b++) {
                next.storeSequence(tokens(5000 + b * 100), 4).join(); // seqs 0..2: only its buffer has them
            }
            proxy.restore();
            await().atMost(PATIENCE).until(() -> metrics.get("restarts") == 1);
            await().atMost(PATIENCE)
                    .untilAsserted(
                            () -> assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(next.groundTruth()));
            await().atMost(PATIENCE).until(() -> watermark.get() == 2 && exactness(listener) == ExactnessState.EXACT);

            // a restart takes longer than the clock margin (a process starts, its model loads)
            long stamped = clockNanos();
            await().atMost(PATIENCE)
                    .until(() -> clockNanos() > stamped + SequenceTracker.CLOCK_MARGIN_NANOS + 200_000_000L);
            next.restart();
            next.storeSequence(tokens(9000), 4).join(); // seq 0 of the process restarted in place, live
            await().atMost(PATIENCE)
                    .untilAsserted(() -> assertThat(sink.asGroundTruth(INSTANCE))
                            .as("only the blocks of the process restarted in place")
                            .isEqualTo(next.groundTruth()));
            assertThat(metrics.get("restarts")).isEqualTo(2);
            await().atMost(PATIENCE).until(() -> watermark.get() == 0 && exactness(listener) == ExactnessState.EXACT);
        }
    }

    /**
     * A clock-started engine (its first seq a clock reading, as the simulator starts it) whose buffer the join found
     * empty, after the SUB connected: everything it publishes from then on reaches the listener live or stays in its
     * buffer, so the first batch its buffer holds is the first it published, and nothing before it is missing. Each
     * such join ended {@code degraded} ("joined an engine that was already running") for as long as
     * {@code --degraded-hold}, the replay of {@code [0, first seq)} finding the buffer start above 0.
     */
    @Test
    void aClockStartedEngineWhoseBufferTheJoinFoundEmptyIsExactFromItsFirstBatch() throws Exception {
        String endpoint = "tcp://127.0.0.1:" + freePort();
        String replayEndpoint = "tcp://127.0.0.1:" + freePort();
        long first = clockNanos();
        EngineSimulator engine = simulator(endpoint, replayEndpoint, first, 10_000);
        EngineListener listener = resources.listener(
                new ListenerSpec(INSTANCE, 0, endpoint, replayEndpoint),
                watermark,
                sink,
                metrics.options().with(o -> o.catchUpOnConnect = true)); // (the service's setting)
        Subscriptions.await(listener, engine, 1);
        // the engine is idle: the join asks it for its buffer from seq 0 and finds it empty
        await().atMost(PATIENCE).until(() -> engine.replays().starts().contains(0L));
        await().atMost(PATIENCE).until(() -> exactness(listener) == ExactnessState.EXACT);
        int asked = engine.replays().starts().size();

        engine.storeSequence(tokens(0), 4).join(); // seq `first`
        engine.storeSequence(tokens(100), 4).join();
        await().atMost(PATIENCE).until(() -> watermark.get() == first + 1);
        await().atMost(PATIENCE).until(() -> engine.replays().starts().size() > asked); // [0, first) was asked for
        await().atMost(PATIENCE).until(() -> exactness(listener) != ExactnessState.REPLAYING);
        assertThat(exactness(listener))
                .as(
                        "its first batch is the first it published: %s",
                        listener.snapshot().exactness().reason())
                .isEqualTo(ExactnessState.EXACT);
        assertThat(listener.lastError()).isNull();
        assertThat(metrics.get("lost")).isZero();
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(engine.groundTruth()));
    }

    /**
     * The same engine joined after it published: whether its buffer still reaches back to its process's first batch
     * cannot be told (that batch's seq is a clock reading, not 0), so the listener says so rather than claim it.
     */
    @Test
    void aClockStartedEngineJoinedAfterItPublishedStaysDegraded() throws Exception {
        String endpoint = "tcp://127.0.0.1:" + freePort();
        String replayEndpoint = "tcp://127.0.0.1:" + freePort();
        long first = clockNanos();
        EngineSimulator engine = simulator(endpoint, replayEndpoint, first, 10_000);
        engine.storeSequence(tokens(0), 4).join(); // nobody listens: only its buffer has it
        EngineListener listener = resources.listener(
                new ListenerSpec(INSTANCE, 0, endpoint, replayEndpoint),
                watermark,
                sink,
                metrics.options().with(o -> o.catchUpOnConnect = true)); // (the service's setting)
        Subscriptions.await(listener, engine, 1);
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(watermark.get())
                        .as("%s", listener.snapshot())
                        .isEqualTo(first));
        await().atMost(PATIENCE).until(() -> exactness(listener) == ExactnessState.DEGRADED);
        assertThat(listener.snapshot().exactness().reason()).contains("joined an engine that was already running");
        engine.storeSequence(tokens(100), 4).join();
        await().atMost(PATIENCE).until(() -> watermark.get() == first + 1);
        assertThat(exactness(listener)).isEqualTo(ExactnessState.DEGRADED);
    }

    /** A listener reading {@code engine}'s PUB through {@code proxy} (its replay direct), once it has subscribed. */
    private EngineListener listenThrough(CuttableProxy proxy, String replayEndpoint, EngineSimulator engine)
            throws Exception {
        EngineListener listener = resources.listener(
                new ListenerSpec(INSTANCE, 0, proxy.endpoint(), replayEndpoint), watermark, sink, metrics.options());
        Subscriptions.await(listener, engine, 1);
        return listener;
    }

    /** Cuts the PUB link and waits until the listener has noticed. */
    private static void cut(CuttableProxy proxy, EngineListener listener) {
        proxy.cut();
        await().atMost(NOTICE).until(() -> listener.snapshot().disconnected());
    }

    /** Publishes {@code batches} batches (seqs 0 up, the engine just started) and waits until all were applied. */
    private void storeLive(EngineSimulator engine, int batches) {
        for (int b = 0; b < batches; b++) {
            engine.storeSequence(tokens(b * 100), 4).join();
        }
        await().atMost(PATIENCE).until(() -> watermark.get() == batches - 1);
    }

    private EngineSimulator simulator(String endpoint, String replayEndpoint, long startSeq, int bufferSteps) {
        for (int attempt = 1; ; attempt++) {
            try {
                return resources.add(EngineSimulator.start(EngineSimulator.Options.builder()
                        .endpoint(endpoint)
                        .replayEndpoint(replayEndpoint)
                        .startSeq(startSeq)
                        .bufferSteps(bufferSteps)
                        .build()));
            } catch (RuntimeException e) { // the port a previous one released may take a moment
                if (attempt == 20) {
                    throw e;
                }
                await().pollDelay(Duration.ofMillis(100)).until(() -> true);
            }
        }
    }

    private static long clockNanos() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    private static int[] tokens(int start) {
        return IntStream.range(start, start + 8).toArray();
    }

    private static ExactnessState exactness(EngineListener listener) {
        return listener.snapshot().exactness().state();
    }

    private static int port(String endpoint) {
        return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
    }

    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0)) {
            return probe.getLocalPort();
        }
    }
}
