package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.sim.EngineEventEncoder;
import io.kvindexer.indexer.sim.EngineEventEncoder.Format;
import io.kvindexer.indexer.sim.EngineEventEncoder.HashMode;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.EngineSimulator.ReplayLayout;
import io.kvindexer.indexer.sim.SimEvent;
import io.kvindexer.indexer.testkit.LogCapture;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** EngineListener against a real EngineSimulator over real ZeroMQ sockets (loopback, OS-chosen ports). */
class EngineListenerTest {

    /** An instance id above Long.MAX_VALUE, so unsigned handling is exercised on the way. */
    private static final long INSTANCE = 0xFFFF_FFFF_FFFF_FF00L;

    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    final TestResources resources = new TestResources();

    private final RecordingSink sink = new RecordingSink();
    private final CountingMetrics metrics = new CountingMetrics();

    /** The engine of {@link #connect}, its listener, and the watermark they share: most tests have one of each. */
    private EngineSimulator sim;

    private EngineListener listener;
    private final SequenceWatermark watermark = new SequenceWatermark();

    private EngineSimulator simulator(EngineSimulator.Options options) {
        EngineSimulator sim = EngineSimulator.start(options);
        resources.add(sim);
        return sim;
    }

    private EngineSimulator simulator() {
        return simulator(EngineSimulator.Options.defaults());
    }

    private EngineListener listener(
            ListenerSpec spec, SequenceWatermark watermark, ReadyGate gate, Duration replayTimeout) {
        EngineListener listener = new EngineListener(
                spec, watermark, sink, gate, metrics.options().with(o -> o.replayTimeout = replayTimeout));
        resources.add(listener);
        listener.start();
        return listener;
    }

    private EngineListener listener(EngineSimulator sim, SequenceWatermark watermark) {
        return listener(sim, watermark, Duration.ofSeconds(10));
    }

    private EngineListener listener(EngineSimulator sim, SequenceWatermark watermark, Duration replayTimeout) {
        return listener(
                new ListenerSpec(INSTANCE, sim.options().dpRank(), sim.endpoint(), sim.replayEndpoint()),
                watermark,
                ReadyGate.open(),
                replayTimeout);
    }

    private EngineSimulator simulatorWithoutReplay() {
        return simulator(EngineSimulator.Options.builder().replayEndpoint(null).build());
    }

    /** Makes {@code engine} the test's {@link #sim}, with a {@link #listener} active and known to it. */
    private void connect(EngineSimulator engine) {
        connect(engine, Duration.ofSeconds(10));
    }

    private void connect(EngineSimulator engine, Duration replayTimeout) {
        sim = engine;
        listener = listener(engine, watermark, replayTimeout);
        awaitConnected(listener, engine, 1);
    }

    /** A first listener of a new engine applied seqs 0..3 and was closed (unregistered): the watermark outlives it. */
    private void firstListenerAppliedThenClosed() {
        connect(simulator());
        workload(sim, 1); // seqs 0..3
        awaitWatermark(watermark, 3);
        listener.close();
    }

    /** Active and known to the publisher: everything published from now on reaches the SUB socket. */
    private static void awaitConnected(EngineListener listener, EngineSimulator sim, int subscriptions) {
        awaitSubscribed(listener, sim, subscriptions);
        await().atMost(PATIENCE).until(() -> listener.status() == ListenerStatus.ACTIVE);
    }

    private static void awaitSubscribed(EngineListener listener, EngineSimulator sim, int subscriptions) {
        Subscriptions.await(listener, sim, subscriptions);
    }

    private void awaitSameState(EngineSimulator sim) {
        await().atMost(PATIENCE)
                .untilAsserted(() -> assertThat(sink.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth()));
    }

    private static void awaitWatermark(SequenceWatermark watermark, long seq) {
        await().atMost(PATIENCE).until(() -> watermark.get() == seq);
    }

    private static int[] tokens(int from, int count) {
        return IntStream.range(from, from + count).toArray();
    }

    private static long[] hashes(int[] tokens) {
        return EngineSimulator.sequenceHashes(tokens, 4, null);
    }

    /** A little workload on one rank: two requests sharing a prefix, an eviction, a host-tier store. */
    private static void workload(EngineSimulator sim, int salt) {
        int[] a = tokens(salt * 1000, 16);
        int[] b = IntStream.concat(IntStream.of(tokens(salt * 1000, 8)), IntStream.of(tokens(salt * 1000 + 500, 8)))
                .toArray();
        sim.storeSequence(a, 4).join();
        sim.storeSequence(b, 4).join();
        long[] ha = hashes(a);
        sim.publish(EngineSimulator.removed(new long[] {ha[3]}, "GPU")).join();
        sim.publish(EngineSimulator.stored(new long[] {ha[0]}, null, tokens(salt * 1000, 4), 4, "CPU", null))
                .join();
    }

    // ---- end to end ------------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(Format.class)
    void everyEventEncodingArrivesAsTheEngineStateWithItsDpRank(Format format) {
        connect(simulator(EngineSimulator.Options.builder()
                .format(format)
                .dpRank(2)
                .hashMode(format == Format.SGLANG7 ? HashMode.I64 : HashMode.U64)
                .build()));

        workload(sim, 1);
        sim.publish(EngineSimulator.cleared()).join();
        workload(sim, 2);

        awaitWatermark(watermark, sim.nextSeq() - 1);
        awaitSameState(sim);
        assertThat(sim.groundTruth()).containsKey(new EngineSimulator.Holder(2, StorageTier.DEVICE));
        // v0.9.0 events carry no medium: the CPU store can only land on the device tier
        assertThat(sim.groundTruth().containsKey(new EngineSimulator.Holder(2, StorageTier.HOST_PINNED)))
                .isEqualTo(format != Format.ARRAY6);
        assertThat(sim.replays().requests()).isZero();
        assertThat(metrics.get("gaps")).isZero();
    }

    @ParameterizedTest
    @EnumSource(HashMode.class)
    void hashModesDecodeToTheSameKeys(HashMode mode) {
        connect(simulator(EngineSimulator.Options.builder().hashMode(mode).build()));

        long high = 0xF000_0000_0000_0001L; // >= 2^63: uint64 on the wire, negative as i64
        sim.publish(EngineSimulator.stored(new long[] {high, 5}, null, tokens(1, 8), 4, "GPU", null))
                .join();

        awaitWatermark(watermark, 0);
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE)).containsExactlyInAnyOrder(high, 5L);
    }

    @Test
    void contiguousSeqsNeedNoReplay() {
        connect(simulator());

        for (int i = 0; i < 30; i++) {
            sim.storeSequence(tokens(i * 100, 8), 4);
        }
        awaitWatermark(watermark, 29);
        awaitSameState(sim);
        assertThat(metrics.get("applied")).isEqualTo(30);
        assertThat(metrics.get("gaps")).isZero();
        assertThat(sim.replays().requests()).isZero();
        assertThat(listener.snapshot())
                .usingRecursiveComparison()
                .ignoringFields("exactness") // ExactnessTest's
                .isEqualTo(new ListenerSnapshot(sim.endpoint(), ListenerStatus.ACTIVE, null, true, null));
    }

    @Test
    void batchRankOverridesTheRegisteredRankAndNilKeepsIt() {
        connect(simulator(EngineSimulator.Options.builder().dpRank(1).build()));

        sim.publishWithRank(5, List.of(EngineSimulator.stored(new long[] {50}, null, tokens(0, 4), 4, "GPU", null)));
        sim.publishWithRank(null, List.of(EngineSimulator.stored(new long[] {10}, null, tokens(0, 4), 4, "GPU", null)))
                .join();

        awaitWatermark(watermark, 1);
        assertThat(sink.held(new WorkerKey(INSTANCE, 5), StorageTier.DEVICE)).containsExactly(50L);
        assertThat(sink.held(new WorkerKey(INSTANCE, 1), StorageTier.DEVICE)).containsExactly(10L);
    }

    @Test
    void unknownEventsEmptyBatchesAndMixedShapesAreAccepted() {
        connect(simulator());

        sim.publish(
                new SimEvent.Unknown("BlockInactive", new long[] {1}),
                EngineSimulator.stored(new long[] {1}, null, tokens(0, 4), 4, "GPU", null));
        sim.publish(List.of());
        sim.publish(
                        new SimEvent.Shaped(
                                EngineSimulator.stored(new long[] {2}, 1L, tokens(4, 4), 4, "GPU", null),
                                Format.ARRAY12),
                        EngineSimulator.stored(new long[] {3}, 2L, tokens(8, 4), 4, "GPU", null))
                .join();

        awaitWatermark(watermark, 2);
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE)).containsExactlyInAnyOrder(1L, 2L, 3L);
        assertThat(metrics.get("unknown")).isEqualTo(1);
        assertThat(metrics.get("applied")).isEqualTo(3);
    }

    // ---- gaps and replay -------------------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(ReplayLayout.class)
    void gapIsReplayedToTheExactEngineState(ReplayLayout layout) {
        connect(simulator(EngineSimulator.Options.builder()
                .replayLayout(layout)
                .topic("kv@10.0.0.7@llama")
                .build()));

        workload(sim, 1);
        awaitWatermark(watermark, 3);
        sim.dropLive(4);
        workload(sim, 2); // seqs 4..7 buffered, never sent live
        long[] first = hashes(tokens(1000, 16));
        sim.publish(EngineSimulator.removed(new long[] {first[0]}, "GPU")).join(); // seq 8, live

        awaitWatermark(watermark, 8);
        awaitSameState(sim);
        // asked from the watermark, 3: its bytes coming back show the engine did not restart since
        assertThat(sim.replays().lastStart()).isEqualTo(3);
        assertThat(metrics.get("replay.ok")).isEqualTo(1);
        assertThat(metrics.get("replay.recovered")).isEqualTo(5); // 4..7 plus 8 itself, which the engine replays too
        assertThat(metrics.get("gaps.missing")).isEqualTo(4);
        assertThat(listener.lastError()).isNull();
    }

    @Test
    void slowJoinerReplaysFromZero() {
        EngineSimulator engine = simulator();
        workload(engine, 1); // seqs 0..3, before anyone listens
        connect(engine);

        sim.storeSequence(tokens(7000, 8), 4).join(); // seq 4: the first one this listener sees

        awaitWatermark(watermark, 4);
        awaitSameState(sim);
        assertThat(sim.replays().lastStart()).isZero();
        assertThat(metrics.get("replay.ok")).isEqualTo(1);
        // Dynamo's initial_gap_replays_from_zero_and_replayed_seq_becomes_stale: the live seq 4 came back in the
        // replay, so the live copy is skipped
        assertThat(metrics.get("stale")).isEqualTo(1);
        assertThat(metrics.get("applied")).isEqualTo(5);
    }

    @Test
    void aNewListenerSeeingTheWatermarkSeqAgainSkipsItWithoutARestart() {
        watermark.set(4); // applied up to 4 by an earlier registration
        // no replay endpoint: a catch-up on connect would ask for seq 4 itself, and an engine that holds nothing
        // from it on counts as restarted while no one listened (ResumeFromWatermarkTest); here the live rule is
        // tested alone
        connect(simulator(EngineSimulator.Options.builder()
                .startSeq(4)
                .replayEndpoint(null)
                .build()));

        sim.storeSequence(tokens(0, 8), 4); // seq 4 again: a duplicate
        sim.storeSequence(tokens(100, 8), 4).join(); // seq 5

        awaitWatermark(watermark, 5);
        assertThat(sink.restarts()).isEmpty();
        assertThat(metrics.get("stale")).isEqualTo(1);
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE))
                .containsExactlyInAnyOrder(hashes(tokens(100, 8))[0], hashes(tokens(100, 8))[1]);
    }

    @Test
    void startOlderThanTheEngineBufferIsNoticed() {
        connect(simulator(EngineSimulator.Options.builder().bufferSteps(4).build()));

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        awaitWatermark(watermark, 0);
        sim.dropLive(10);
        for (int i = 1; i <= 10; i++) {
            sim.storeSequence(tokens(i * 100, 8), 4); // seqs 1..10; the buffer keeps 7..10
        }
        sim.storeSequence(tokens(5000, 8), 4).join(); // seq 11, live; buffer 8..11

        awaitWatermark(watermark, 11);
        await().atMost(PATIENCE).until(() -> metrics.get("replay.incomplete") == 1);
        // batches 1..7 are gone for good: what the worker held may be wrong, so it was dropped first
        assertThat(listener.lastError())
                .startsWith("replay incomplete: engine buffer starts at 8, requested 1")
                .contains("dropped the blocks of worker " + Long.toUnsignedString(INSTANCE) + " dp_rank 0");
        assertThat(listener.status()).isEqualTo(ListenerStatus.ACTIVE);
        WorkerKey worker = new WorkerKey(INSTANCE, 0);
        assertThat(sink.gapLosses()).containsExactly(worker);
        assertThat(metrics.get("unrecoverable")).isEqualTo(1);
        assertThat(sink.held(worker, StorageTier.DEVICE)).doesNotContain(hashes(tokens(0, 8))[0]);
        for (int i = 1; i <= 7; i++) { // lost for good: older than the engine's buffer
            assertThat(sink.held(worker, StorageTier.DEVICE)).doesNotContain(hashes(tokens(i * 100, 8))[0]);
        }
        for (int i = 8; i <= 10; i++) { // replayed from the buffer
            assertThat(sink.held(worker, StorageTier.DEVICE)).contains(hashes(tokens(i * 100, 8))[0]);
        }
    }

    @Test
    void skippedSeqsCannotBeReplayedAndAreReported() {
        connect(simulator());

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        sim.skip(3);
        sim.storeSequence(tokens(100, 8), 4).join(); // seq 4

        awaitWatermark(watermark, 4);
        await().atMost(PATIENCE).until(() -> metrics.get("replay.incomplete") == 1);
        assertThat(listener.lastError()).startsWith("replay incomplete: engine buffer starts at 4, requested 1");
        // the indexer cannot know the skipped seqs held nothing: seq 0's blocks are dropped, seq 4's kept
        assertThat(sink.gapLosses()).containsExactly(new WorkerKey(INSTANCE, 0));
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE))
                .containsExactlyInAnyOrder(hashes(tokens(100, 8))[0], hashes(tokens(100, 8))[1]);
    }

    @Test
    void silentReplayRouterTimesOutAndLiveBatchesFlowOn() {
        EngineSimulator engine = simulator();
        engine.silentReplay(true);
        connect(engine, Duration.ofMillis(300));

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        awaitWatermark(watermark, 0);
        sim.dropLive(1);
        sim.storeSequence(tokens(100, 8), 4).join(); // seq 1, lost
        sim.storeSequence(tokens(200, 8), 4).join(); // seq 2 -> replay, never answered

        await().atMost(PATIENCE).until(() -> metrics.get("replay.timeout") == 1);
        assertThat(listener.lastError()).startsWith("replay from 1 timed out 3 times after 300 ms");
        awaitWatermark(watermark, 2);

        sim.storeSequence(tokens(300, 8), 4).join(); // seq 3
        awaitWatermark(watermark, 3);
        assertThat(listener.status()).isEqualTo(ListenerStatus.ACTIVE);
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE))
                .contains(hashes(tokens(300, 8))[1])
                .doesNotContain(hashes(tokens(100, 8))[0]);

        // the replay socket still works once the engine answers again
        sim.silentReplay(false);
        sim.dropLive(1);
        sim.storeSequence(tokens(400, 8), 4).join(); // seq 4, lost
        sim.storeSequence(tokens(500, 8), 4).join(); // seq 5
        awaitWatermark(watermark, 5);
        await().atMost(PATIENCE).until(() -> metrics.get("replay.ok") == 1);
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE)).contains(hashes(tokens(400, 8))[0]);
    }

    @Test
    void aReplayRequestLeftUnansweredIsAskedAgainBeforeAnythingIsDropped() {
        connect(simulator(), Duration.ofMillis(300));
        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        awaitWatermark(watermark, 0);

        // the engine is slow to answer the first request (a busy engine, or a stalled fresh connection)
        sim.silentReplay(true);
        int before = sim.replays().requests();
        sim.dropLive(1);
        sim.storeSequence(tokens(100, 8), 4).join(); // seq 1, lost
        sim.storeSequence(tokens(200, 8), 4).join(); // seq 2 -> replay
        await().atMost(PATIENCE).until(() -> sim.replays().requests() > before);
        sim.silentReplay(false);

        awaitWatermark(watermark, 2);
        await().atMost(PATIENCE).until(() -> metrics.get("replay.ok") == 1);
        assertThat(metrics.get("replay.timeout")).isZero();
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE))
                .contains(hashes(tokens(0, 8))[0], hashes(tokens(100, 8))[0], hashes(tokens(200, 8))[0]);
    }

    @Test
    void liveRemovedArrivingDuringAReplayIsAppliedAfterTheReplayedStored() {
        connect(simulator());

        long a = 4242;
        sim.publish(EngineSimulator.stored(new long[] {1}, null, tokens(0, 4), 4, "GPU", null))
                .join(); // seq 0
        awaitWatermark(watermark, 0);
        sim.deferReplays(true);
        sim.dropLive(1);
        sim.publish(EngineSimulator.stored(new long[] {a}, 1L, tokens(4, 4), 4, "GPU", null)); // seq 1, lost live
        sim.publish(EngineSimulator.stored(new long[] {7}, null, tokens(9, 4), 4, "GPU", null))
                .join(); // seq 2
        await().atMost(PATIENCE).until(() -> sim.replays().deferredRequests() == 1); // the listener is in its replay
        sim.publish(EngineSimulator.removed(new long[] {a}, "GPU")).join(); // seq 3, live, while it waits
        sim.releaseDeferredReplays().join(); // answers with seqs 1..2 only (the buffer when asked)

        awaitWatermark(watermark, 3);
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE)).doesNotContain(a);
        List<String> log = sink.log();
        String key = new WorkerKey(INSTANCE, 0).toString();
        assertThat(log.indexOf(key + " stored " + a)).isLessThan(log.indexOf(key + " removed " + a));
        awaitSameState(sim);
    }

    @Test
    void publisherRestartDropsTheWorkerAndStartsOver() {
        connect(simulator());

        workload(sim, 1);
        awaitWatermark(watermark, 3);
        sim.restart();
        sim.storeSequence(tokens(9000, 8), 4).join(); // seq 0 of the new engine process

        await().atMost(PATIENCE).until(() -> sink.restarts().size() == 1);
        assertThat(sink.restarts()).containsExactly(new WorkerKey(INSTANCE, 0));
        awaitWatermark(watermark, 0);
        awaitSameState(sim);
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.HOST_PINNED))
                .isEmpty();
        assertThat(metrics.get("restarts")).isEqualTo(1);

        sim.storeSequence(tokens(9100, 8), 4).join(); // seq 1 continues normally
        awaitWatermark(watermark, 1);
        awaitSameState(sim);
        assertThat(sink.restarts()).hasSize(1);
    }

    @Test
    void watermarkOutlivesTheListenerAndTheNextOneReplaysFromLastPlusOne() {
        firstListenerAppliedThenClosed();

        sim.storeSequence(tokens(300, 8), 4).join(); // seq 4, nobody listens
        sim.storeSequence(tokens(400, 8), 4).join(); // seq 5

        EngineListener second = listener(sim, watermark); // register again, same watermark
        awaitConnected(second, sim, 2);
        sim.storeSequence(tokens(500, 8), 4).join(); // seq 6

        awaitWatermark(watermark, 6);
        awaitSameState(sim);
        // asked on connect from the watermark itself, before seq 6 showed the gap
        assertThat(sim.replays().starts()).first().isEqualTo(3L);
        assertThat(sink.restarts()).isEmpty();
    }

    @Test
    void restartSeenByANewListenerThroughTheWatermark() {
        firstListenerAppliedThenClosed();

        sim.restart();
        sim.storeSequence(tokens(300, 8), 4).join(); // seq 0 of a new process, nobody listens

        EngineListener second = listener(sim, watermark);
        awaitConnected(second, sim, 2);
        sim.storeSequence(tokens(400, 8), 4).join(); // seq 1 < watermark 3: restarted

        awaitWatermark(watermark, 1);
        assertThat(sink.restarts()).containsExactly(new WorkerKey(INSTANCE, 0));
        awaitSameState(sim); // seq 0 of the new process came back by replay from 0
    }

    // ---- malformed input -------------------------------------------------------------------------------

    @Test
    void malformedMessagesAreCountedAndSkipped() {
        connect(simulator());

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        awaitWatermark(watermark, 0);
        sim.sendRaw(new byte[0], new byte[8]);
        sim.sendRaw(new byte[0], new byte[8], new byte[] {(byte) 0x90}, new byte[0]);
        sim.sendRaw(new byte[0], new byte[7], new byte[] {(byte) 0x90});
        sim.publishPayload(new byte[] {(byte) 0xc1, 0x01, 0x02}); // seq 1: not msgpack
        sim.storeSequence(tokens(100, 8), 4).join(); // seq 2

        awaitWatermark(watermark, 2);
        assertThat(metrics.get("malformed.frame_count")).isEqualTo(2);
        assertThat(metrics.get("malformed.seq_length")).isEqualTo(1);
        assertThat(metrics.sumStartingWith("decode.")).isGreaterThanOrEqualTo(1);
        assertThat(listener.status()).isEqualTo(ListenerStatus.ACTIVE);
        awaitSameState(sim);
    }

    /**
     * A payload that does not decode says nothing about the engine, its seq included: one carrying a seq already
     * applied is no restart (it dropped the worker's blocks), and one far ahead is no gap (it dropped them too, as
     * lost, and the engine's next real batch then read as a restart).
     */
    @Test
    void theSeqOfAPayloadThatDoesNotDecodeIsNotBelieved() {
        connect(simulatorWithoutReplay());

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        awaitWatermark(watermark, 0);
        sim.sendRaw(new byte[0], seq(0), new byte[] {(byte) 0xc1}); // seq 0 again, not msgpack
        sim.sendRaw(new byte[0], seq(1000), new byte[] {(byte) 0xc1}); // far ahead
        sim.sendRaw(new byte[0], seq(-1L), new byte[] {(byte) 0xc1}); // the highest u64
        sim.storeSequence(tokens(100, 8), 4).join(); // seq 1

        awaitWatermark(watermark, 1);
        awaitSameState(sim);
        assertThat(sink.restarts()).isEmpty();
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(metrics.get("restarts")).isZero();
        assertThat(metrics.get("lost")).isZero();
        assertThat(metrics.sumStartingWith("decode.")).isEqualTo(2);
        assertThat(metrics.get("malformed.reserved_seq")).as("the highest u64").isEqualTo(1);
    }

    /**
     * The seq {@code ff x 8} is the replay end marker's and the unset watermark's, never a live batch's: a batch that
     * carries it, even one that decodes, is malformed. Taken, it read as a gap of 2^64 - 2 lost batches (or a restart)
     * that dropped the worker's blocks and left the stream without a watermark.
     */
    @Test
    void aLiveBatchWithTheEndMarkersSeqIsSkippedAsMalformed() {
        connect(simulatorWithoutReplay());

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        awaitWatermark(watermark, 0);
        byte[] decodable = new EngineEventEncoder(Format.MAP, HashMode.U64)
                .encode(
                        1.7575e9,
                        List.of(EngineSimulator.stored(new long[] {77}, null, tokens(900, 4), 4, "GPU", null)),
                        0);
        sim.sendRaw(new byte[0], seq(-1L), decodable);
        sim.storeSequence(tokens(100, 8), 4).join(); // seq 1

        awaitWatermark(watermark, 1);
        awaitSameState(sim);
        assertThat(metrics.get("malformed.reserved_seq")).isEqualTo(1);
        assertThat(sink.restarts()).isEmpty();
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(metrics.get("lost")).isZero();
        assertThat(listener.exactness().read().state()).isEqualTo(ExactnessState.EXACT);
    }

    private static byte[] seq(long seq) {
        return ByteBuffer.allocate(8).putLong(seq).array();
    }

    // ---- lifecycle -------------------------------------------------------------------------------------

    /** Also Dynamo's zmq_buffers_messages_during_brief_delay: 10 messages sent while not draining arrive in order. */
    @Test
    void readyGateHoldsDeliveryAndMessagesSentMeanwhileArriveInOrder() {
        sim = simulator();
        ReadyGate gate = new ReadyGate();
        listener = listener(
                new ListenerSpec(INSTANCE, 0, sim.endpoint(), sim.replayEndpoint()),
                watermark,
                gate,
                Duration.ofSeconds(10));
        awaitSubscribed(listener, sim, 1); // connected, gate still closed

        List<Long> expected = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            expected.add((long) (1000 + i));
            sim.publish(EngineSimulator.stored(new long[] {1000 + i}, null, tokens(i * 4, 4), 4, "GPU", null))
                    .join();
        }
        assertThat(listener.status()).isEqualTo(ListenerStatus.PENDING);
        assertThat(sink.batches()).isZero();

        gate.openGate();
        awaitWatermark(watermark, 9);
        assertThat(listener.status()).isEqualTo(ListenerStatus.ACTIVE);
        String key = new WorkerKey(INSTANCE, 0).toString();
        assertThat(sink.log())
                .containsExactlyElementsOf(
                        expected.stream().map(h -> key + " stored " + h).toList());
        assertThat(sim.replays().requests()).as("all came from the SUB queue").isZero();
    }

    @Test
    void pauseDropsTheSocketAndResumeCatchesUpWithTheSameWatermark() {
        connect(simulator());
        workload(sim, 1);
        awaitWatermark(watermark, 3);

        assertThat(listener.pause()).isTrue();
        assertThat(listener.status()).isEqualTo(ListenerStatus.PAUSED);
        assertThat(listener.pause()).isFalse();
        workload(sim, 2); // seqs 4..7 while paused
        assertThat(watermark.get()).isEqualTo(3);

        assertThat(listener.resume()).isTrue();
        assertThat(listener.resume()).isFalse();
        awaitConnected(listener, sim, 2);
        sim.storeSequence(tokens(8000, 8), 4).join(); // seq 8

        awaitWatermark(watermark, 8);
        awaitSameState(sim);
        // asked from the watermark itself as soon as it was connected again
        assertThat(sim.replays().starts()).first().isEqualTo(3L);
    }

    /** Dynamo's zmq_subscriber_connects_before_publisher_bind. */
    @Test
    void subscriberConnectedBeforeThePublisherBindsStillReceives() throws IOException {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        String endpoint = "tcp://127.0.0.1:" + port;
        listener = listener(
                new ListenerSpec(INSTANCE, 0, endpoint, null), watermark, ReadyGate.open(), Duration.ofSeconds(10));
        await().atMost(PATIENCE).until(() -> listener.status() == ListenerStatus.ACTIVE);

        sim = simulator(EngineSimulator.Options.builder()
                .endpoint(endpoint)
                .replayEndpoint(null)
                .build());
        awaitSubscribed(listener, sim, 1);
        sim.storeSequence(tokens(0, 8), 4).join();

        awaitWatermark(watermark, 0);
        awaitSameState(sim);
    }

    @Test
    void withoutReplayEndpointAGapIsCountedAndLiveGoesOn() {
        connect(simulatorWithoutReplay());

        sim.storeSequence(tokens(0, 8), 4).join();
        sim.dropLive(2);
        sim.storeSequence(tokens(100, 8), 4);
        sim.storeSequence(tokens(200, 8), 4);
        sim.storeSequence(tokens(300, 8), 4).join(); // seq 3

        awaitWatermark(watermark, 3);
        assertThat(metrics.get("lost")).isEqualTo(2);
        assertThat(listener.status()).isEqualTo(ListenerStatus.ACTIVE);
    }

    /**
     * Joining an engine that published before, without a replay endpoint, loses nothing this listener followed: the
     * warning says what is missing (the engine's earlier stores), not "batches lost", and a real loss later is still
     * logged as one (its own kind of once-per-listener warning).
     */
    @Test
    void withoutReplayEndpointAJoinIsNoLossAndALaterLossIsStillLogged() {
        sim = simulatorWithoutReplay();
        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0, before anyone listens: dropped by the PUB
        try (LogCapture log = LogCapture.warningsOf(EngineListener.class)) {
            listener = listener(sim, watermark);
            awaitConnected(listener, sim, 1);
            sim.storeSequence(tokens(100, 8), 4).join(); // seq 1, the listener's first
            awaitWatermark(watermark, 1);
            assertThat(log.warnings())
                    .singleElement()
                    .asString()
                    .contains("published before seq 1 (before this listener joined)")
                    .doesNotContain("lost");
            assertThat(metrics.get("lost")).isZero();

            sim.dropLive(1);
            sim.storeSequence(tokens(200, 8), 4); // seq 2, lost
            sim.storeSequence(tokens(300, 8), 4).join(); // seq 3
            awaitWatermark(watermark, 3);
            assertThat(log.warnings().get(1)).contains("No replay endpoint configured; batches lost");
            assertThat(metrics.get("lost")).isEqualTo(1);
        }
    }

    @Test
    void withoutReplayEndpointAGapAfterAppliedBatchesDropsTheWorkersBlocks() {
        connect(simulatorWithoutReplay());

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        awaitWatermark(watermark, 0);
        assertThat(sink.gapLosses()).isEmpty();
        sim.dropLive(1);
        sim.storeSequence(tokens(100, 8), 4); // seq 1, lost
        sim.storeSequence(tokens(200, 8), 4).join(); // seq 2

        awaitWatermark(watermark, 2);
        assertThat(sink.gapLosses()).containsExactly(new WorkerKey(INSTANCE, 0));
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE))
                .containsExactlyInAnyOrder(hashes(tokens(200, 8))[0], hashes(tokens(200, 8))[1]);
        assertThat(listener.lastError()).startsWith("batches 1..1 lost: no replay endpoint; dropped the blocks of");
        assertThat(metrics.get("unrecoverable")).isEqualTo(1);
    }

    /**
     * A lost batch and then payloads that do not decode: the loss is reported (and counted) once. The undecodable
     * ones leave the watermark where it was, so each used to report the same loss again, one batch longer.
     */
    @Test
    void aLossFollowedByPayloadsThatDoNotDecodeIsReportedOnce() {
        connect(simulatorWithoutReplay());

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        awaitWatermark(watermark, 0);
        sim.dropLive(1);
        sim.storeSequence(tokens(100, 8), 4); // seq 1, lost
        for (int i = 0; i < 3; i++) {
            sim.publishPayload(new byte[] {(byte) 0xc1}); // seqs 2..4 arrive but do not decode
        }
        sim.storeSequence(tokens(200, 8), 4).join(); // seq 5

        awaitWatermark(watermark, 5);
        assertThat(metrics.get("lost")).isEqualTo(1);
        assertThat(metrics.get("gaps.missing")).isEqualTo(1);
        assertThat(metrics.get("unrecoverable")).isEqualTo(1);
        assertThat(sink.gapLosses()).containsExactly(new WorkerKey(INSTANCE, 0));
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE))
                .containsExactlyInAnyOrder(hashes(tokens(200, 8))[0], hashes(tokens(200, 8))[1]);
        assertThat(listener.lastError())
                .startsWith("1 of batches 1..4 lost (the others arrived and did not decode): no replay endpoint;"
                        + " dropped the blocks of")
                .endsWith("(1 batches lost), live events rebuild them");
    }

    /** A gap over a seq that came and did not decode and one that never came counts one lost batch, not two. */
    @Test
    void aGapCountsOnlyTheSeqsThatDidNotArrive() {
        connect(simulatorWithoutReplay());

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        awaitWatermark(watermark, 0);
        sim.publishPayload(new byte[] {(byte) 0xc1}); // seq 1 arrives but does not decode
        sim.dropLive(1);
        sim.storeSequence(tokens(100, 8), 4); // seq 2, lost
        sim.storeSequence(tokens(200, 8), 4).join(); // seq 3: one gap over 1..2

        awaitWatermark(watermark, 3);
        assertThat(listener.lastError())
                .startsWith("1 of batches 1..2 lost (the others arrived and did not decode): no replay endpoint");
        assertThat(metrics.get("lost")).isEqualTo(1);
        assertThat(metrics.get("gaps.missing")).isEqualTo(1);
        assertThat(metrics.sumStartingWith("decode.")).isEqualTo(1);
    }

    @Test
    void aPayloadThatDoesNotDecodeIsNoLostBatch() {
        connect(simulatorWithoutReplay());

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        sim.publishPayload(new byte[] {(byte) 0xc1}); // seq 1 arrives but does not decode
        sim.storeSequence(tokens(100, 8), 4).join(); // seq 2: a "gap" over seq 1 only

        awaitWatermark(watermark, 2);
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(listener.lastError()).isNull();
        awaitSameState(sim);
    }

    /**
     * Seqs that arrived live and did not decode leave the watermark behind them, so the next live seq looks like a
     * gap over them. The engine's buffer holds the same bytes: no replay is asked for, and no gap counted.
     */
    @Test
    void aGapOverSeqsThatArrivedAndDidNotDecodeIsNotReplayed() {
        connect(simulator());

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        sim.publishPayload(new byte[] {(byte) 0xc1}); // seqs 1 and 2 arrive but do not decode
        sim.publishPayload(new byte[] {(byte) 0xc1});
        sim.storeSequence(tokens(100, 8), 4).join(); // seq 3

        awaitWatermark(watermark, 3);
        awaitSameState(sim);
        assertThat(sim.replays().requests()).isZero();
        assertThat(metrics.get("gaps")).isZero();
        assertThat(sink.gapLosses()).isEmpty();
        assertThat(metrics.sumStartingWith("decode.")).isEqualTo(2);
    }

    /**
     * A dropped batch that does not decode either, among more that do not decode: the next batch that decodes shows
     * the gap, and one replay brings the dropped one back, still undecodable; it is counted once, as are the ones
     * that arrived live (their replayed copies are not decoded again), and nothing is asked for again.
     */
    @Test
    void aReplayedBatchThatDoesNotDecodeIsNotAskedForAgain() {
        connect(simulator());

        sim.storeSequence(tokens(0, 8), 4).join(); // seq 0
        awaitWatermark(watermark, 0);
        sim.dropLive(1);
        sim.publishPayload(new byte[] {(byte) 0xc1}); // seq 1: dropped live, and it does not decode
        for (int i = 0; i < 3; i++) {
            sim.publishPayload(new byte[] {(byte) 0xc1}).join(); // seqs 2..4 arrive, do not decode
        }
        sim.storeSequence(tokens(100, 8), 4).join(); // seq 5: a gap over 1 (2..4 arrived)
        awaitWatermark(watermark, 5);
        sim.publishPayload(new byte[] {(byte) 0xc1}).join(); // seq 6
        sim.storeSequence(tokens(200, 8), 4).join(); // seq 7

        awaitWatermark(watermark, 7);
        awaitSameState(sim);
        assertThat(sim.replays().requests()).isEqualTo(1);
        assertThat(metrics.get("gaps")).isEqualTo(1);
        assertThat(metrics.get("replay.ok")).isEqualTo(1);
        assertThat(metrics.sumStartingWith("decode.")).isEqualTo(5);
    }

    @Test
    void badEndpointFailsWithTheConnectErrorAndResumeRetries() {
        listener = listener(
                new ListenerSpec(INSTANCE, 3, "tcp://no-port-here", null),
                watermark,
                ReadyGate.open(),
                Duration.ofSeconds(10));

        await().atMost(PATIENCE).until(() -> listener.status() == ListenerStatus.FAILED);
        assertThat(listener.lastError()).startsWith("failed to connect ZMQ SUB socket to tcp://no-port-here: ");
        assertThat(listener.pause()).isFalse();
        assertThat(listener.resume()).isTrue();
        await().atMost(PATIENCE).until(() -> listener.status() == ListenerStatus.FAILED);
        assertThat(listener.lastError()).startsWith("failed to connect ZMQ SUB socket to tcp://no-port-here: ");
    }

    @Test
    void closeStopsDelivery() {
        connect(simulator());
        sim.storeSequence(tokens(0, 8), 4).join();
        awaitWatermark(watermark, 0);

        listener.close();
        sim.storeSequence(tokens(100, 8), 4).join();
        // a second listener on the same stream proves the batch was sent; the closed one must not apply it
        SequenceWatermark other = new SequenceWatermark();
        EngineListener witness = new EngineListener(
                new ListenerSpec(INSTANCE + 1, 0, sim.endpoint(), sim.replayEndpoint()),
                other,
                sink,
                ReadyGate.open(),
                ListenerOptions.defaults());
        resources.add(witness);
        witness.start();
        awaitConnected(witness, sim, 2);
        sim.storeSequence(tokens(200, 8), 4).join();
        awaitWatermark(other, 2);
        assertThat(watermark.get()).isZero();
        assertThat(sink.held(new WorkerKey(INSTANCE, 0), StorageTier.DEVICE)).hasSize(2);
    }
}
