package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimEvent;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An engine's PUB socket drops what its high-water mark cannot hold while the listener is behind. A dropped batch in
 * the middle of the stream shows as a gap at the next one; a dropped tail, followed by silence, shows only because
 * the listener asks the engine what followed once the stream has gone quiet after being behind.
 */
class DroppedTailTest {

    private static final long INSTANCE = 11;
    private static final Duration QUIET = Duration.ofMillis(300);

    @RegisterExtension
    final TestResources resources = new TestResources();

    private final RecordingSink recorded = new RecordingSink(false);
    private final CountingMetrics metrics = new CountingMetrics();
    private final SequenceWatermark watermark = new SequenceWatermark();
    private final SplittableRandom random = new SplittableRandom(11);
    /** the listener applies nothing until this opens: it falls behind the engine, as a slow reader does */
    private final CountDownLatch caughtUp = new CountDownLatch(1);

    private final BatchSink slowSink = new BatchSink() {
        @Override
        public void apply(WorkerKey worker, List<KvEvent> events) {
            try {
                caughtUp.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            recorded.apply(worker, events);
        }

        @Override
        public void publisherRestarted(WorkerKey worker) {
            recorded.publisherRestarted(worker);
        }

        @Override
        public void gapUnrecoverable(WorkerKey worker) {
            recorded.gapUnrecoverable(worker);
        }
    };

    /**
     * The engine publishes 301 batches while the listener is stuck on the first; its PUB drops the last 21 (buffered
     * for replay, never sent live), and then it goes quiet. Without the check the listener would end exact at seq 279
     * with 21 stores missing for good. With it, the quiet spell brings one request from seq 279 (the last applied: its
     * bytes coming back show the engine did not restart), and the listener ends with the engine's state, exact.
     */
    @Test
    void aTailDroppedWhileBehindIsAskedForOnceTheEngineGoesQuiet() {
        EngineSimulator sim = resources.add(EngineSimulator.Options.builder().start());
        EngineListener listener = listener(sim);
        Subscriber probe = probe(sim);
        for (int seq = 0; seq <= 300; seq++) {
            if (seq == 280) {
                sim.dropLive(21); // 280..300: buffered for replay, never sent live
            }
            sim.publish(batch(seq));
        }
        awaitReceived(probe, 279); // the last live batch: the backlog waits at the listener's socket too
        caughtUp.countDown();

        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 300);
        } catch (ConditionTimeoutException e) {
            // say where it stopped: the watermark, the listener, the engine's replay requests, the counters
            throw new AssertionError(
                    "applied up to " + watermark.get() + "; " + listener.snapshot() + "; " + sim.replays()
                            + "; metrics " + metrics,
                    e);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> metrics.get("replay.ok") == 1); // the check has ended
        assertThat(recorded.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(sim.replays().starts())
                .as("one check from the last seq applied, and once more: nothing after 300")
                .containsExactly(279L, 301L);
        assertThat(listener.exactness().read().state()).isEqualTo(ExactnessState.EXACT);
        assertThat(listener.lastError()).isNull();
        assertThat(metrics.get("replay.recovered")).isEqualTo(21);
    }

    /**
     * The engine restarts while the listener is behind, and its new process publishes 300 batches that never arrive
     * live (seqs 0..299, as many as the old one's). The check after the quiet spell, asked from the last seq applied
     * (299), gets the new process's 299: other bytes, so the engine restarted, and its blocks are the new process's.
     * Asked from 300, it would get nothing, and the old process's blocks would stay for good.
     */
    @Test
    void aTailCheckAnsweredByARestartedEngineDropsTheOldProcesssBlocks() {
        EngineSimulator sim = resources.add(EngineSimulator.Options.builder().start());
        EngineListener listener = listener(sim);
        Subscriber probe = probe(sim);
        for (int seq = 0; seq < 300; seq++) {
            sim.publish(batch(seq));
        }
        awaitReceived(probe, 299); // the backlog waits at the listener's socket too
        sim.restart();
        sim.dropLive(300);
        CompletableFuture<?> last = null;
        for (int seq = 0; seq < 300; seq++) {
            last = sim.publish(batch(50_000 + seq)); // the new process's: buffered for replay, never sent live
        }
        last.join();
        caughtUp.countDown();

        await().atMost(Duration.ofSeconds(30)).until(() -> metrics.get("restarts") == 1);
        await().atMost(Duration.ofSeconds(30))
                .untilAsserted(
                        () -> assertThat(recorded.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth()));
        await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 299);
        await().atMost(Duration.ofSeconds(30))
                .until(() -> listener.exactness().read().state() == ExactnessState.EXACT);
    }

    /**
     * A stream that never fell behind cannot have lost a tail (its engine's PUB queue never filled), so it is not
     * asked, however often it goes quiet: an idle fleet costs no replays.
     */
    @Test
    void aStreamThatKeptUpIsNeverAsked() throws InterruptedException {
        caughtUp.countDown();
        EngineSimulator sim = resources.add(EngineSimulator.Options.builder().start());
        listener(sim);
        for (int seq = 0; seq < 5; seq++) {
            sim.publish(batch(seq)).join();
            long applied = seq;
            await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == applied);
            Thread.sleep(2 * QUIET.toMillis()); // a quiet spell after each batch
        }
        assertThat(recorded.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(sim.replays().requests()).isZero();
    }

    /**
     * A batch larger than one read (a long prompt's prefill, hundreds of KB) after a quiet spell, on a link that holds
     * it halfway for a moment: its first read fills the read buffer, as a stream that is behind does, while the rest
     * is still on its way. The engine is not quiet while it sends: it is not asked meanwhile, so the batch is not
     * taken for one its PUB dropped (a false gap, a replay of it, and a log line saying it did not arrive live).
     */
    @Test
    void aLargeBatchStillOnItsWayIsNotTakenForADroppedTail() throws Exception {
        caughtUp.countDown();
        EngineSimulator sim = resources.add(EngineSimulator.Options.builder().start());
        try (CuttableProxy link = new CuttableProxy(URI.create(sim.endpoint()).getPort())) {
            listener(sim, link.endpoint(), ReplayPermits.shared());
            sim.publish(batch(0)).join();
            await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 0);
            Thread.sleep(2 * QUIET.toMillis()); // quiet since

            int blocks = 40_000;
            long[] hashes = new long[blocks];
            for (int i = 0; i < blocks; i++) {
                hashes[i] = 1_000_000L + i;
            }
            link.stallAfter(64 * 1024, QUIET.multipliedBy(3));
            sim.publish(EngineSimulator.stored(
                            hashes, null, random.ints(4 * blocks, 0, 30_000).toArray(), 4, "GPU", null))
                    .join(); // about 0.5 MB
            await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 1);
            Thread.sleep(2 * QUIET.toMillis()); // a check after the batch, if any, has ended
        }
        assertThat(metrics.get("gaps")).as("no batch was missing: " + metrics).isZero();
        assertThat(metrics.get("replay.recovered")).isZero();
        assertThat(metrics.get("stale"))
                .as("it arrived live, not as a copy of a replayed one")
                .isZero();
        assertThat(sim.replays().requests())
                .as("reads filled by one large message are no backlog: no check after it either")
                .isZero();
        assertThat(recorded.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
    }

    /**
     * Tail checks queue for replay permits (a fleet's engines went quiet together). One whose engine turns busy again
     * while it waits needs none when the first live batch follows the last one applied: it ends without a request,
     * and the live stream goes on, although every permit stays taken.
     */
    @Test
    void aQueuedTailCheckThatTheLiveStreamAnswersEndsWithoutARequest() throws InterruptedException {
        ReplayPermits permits = new ReplayPermits(1);
        assertThat(permits.acquire(() -> false)).isTrue(); // every permit taken, for the whole test
        EngineSimulator sim = resources.add(EngineSimulator.Options.builder().start());
        EngineListener listener = listener(sim, permits);
        Subscriber probe = probe(sim);
        for (int seq = 0; seq < 300; seq++) {
            sim.publish(batch(seq)); // while the listener is stuck: it falls behind
        }
        // the backlog waits at the listener's socket too: read a turn's worth at once, it is behind (on a busy
        // machine batches still on their way when it was let go could arrive one read at a time, never behind)
        awaitReceived(probe, 299);
        caughtUp.countDown();
        await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 299);
        await().atMost(Duration.ofSeconds(30)).until(() -> permits.waiting() == 1); // the tail check, queued

        sim.publish(batch(300)).join(); // the engine again, right after seq 299: nothing was dropped
        await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 300);
        assertThat(permits.waiting()).as("the check gave up its place").isZero();
        sim.publish(batch(301)).join();
        await().atMost(Duration.ofSeconds(30)).until(() -> watermark.get() == 301);
        assertThat(sim.replays().requests()).isZero();
        assertThat(recorded.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth());
        assertThat(listener.exactness().read().state()).isEqualTo(ExactnessState.EXACT);
    }

    private EngineListener listener(EngineSimulator sim) {
        return listener(sim, ReplayPermits.shared());
    }

    private EngineListener listener(EngineSimulator sim, ReplayPermits permits) {
        return listener(sim, sim.endpoint(), permits);
    }

    /** A listener of {@code sim} whose live stream comes from {@code endpoint} (the engine's, or a proxy's). */
    private EngineListener listener(EngineSimulator sim, String endpoint, ReplayPermits permits) {
        EngineListener listener = resources.listener(
                new ListenerSpec(INSTANCE, 0, endpoint, sim.replayEndpoint()),
                watermark,
                slowSink,
                metrics.options().with(o -> {
                    o.replayTimeout = Duration.ofSeconds(5);
                    o.tailCheckAfter = QUIET;
                    o.replayPermits = permits;
                }));
        Subscriptions.awaitActive(listener, sim, Duration.ofSeconds(30));
        return listener;
    }

    /**
     * A second subscriber to the engine, counted by it. A publish's future says only that the engine handed the batch
     * to its PUB socket: ZeroMQ's I/O thread writes it later, at most 8 KB (56 of these batches) at a time, and a
     * listener released before that reads each write as it comes, never behind, so never asked about a tail. The
     * engine's one I/O thread writes to both connections alike: once the probe has a batch, the listener's socket
     * holds what came before it (all but the last write at most).
     */
    private Subscriber probe(EngineSimulator sim) {
        int before = sim.subscriptions();
        Subscriber probe = resources.add(new Subscriber(
                null,
                null,
                sim.endpoint(),
                Duration.ofSeconds(2),
                () -> {},
                new EngineLink(System::currentTimeMillis, () -> {}, () -> {})));
        probe.open();
        await().pollInSameThread().atMost(Duration.ofSeconds(30)).until(() -> {
            probe.tick();
            probe.receiveNow();
            return sim.subscriptions() > before;
        });
        return probe;
    }

    private static void awaitReceived(Subscriber probe, long seq) {
        await().pollInSameThread().atMost(Duration.ofSeconds(30)).until(() -> {
            probe.tick();
            for (List<byte[]> m; (m = probe.receiveNow()) != null; ) {
                if (Frames.readSeq(m.get(1)) == seq) {
                    return true;
                }
            }
            return false;
        });
    }

    /** Batch {@code seq}: one block of its own, stored on the GPU. */
    private SimEvent batch(long seq) {
        int[] tokens = random.ints(4, 0, 30_000).toArray();
        return EngineSimulator.stored(new long[] {1_000 + seq}, null, tokens, 4, "GPU", null);
    }
}
