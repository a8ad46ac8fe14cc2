package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.ConfigException;
import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimulatorBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMsg;

/**
 * The receive queue is bounded in bytes ({@code --ingest-queue-bytes}): with the index writer stalled, a real
 * listener stops reading at the bound, the engine's PUB (vLLM's default send high-water mark) drops what does not
 * fit, and once the writer moves again the gap is replayed from the engine's buffer: the index ends equal to the
 * engine and exact, and what waited unapplied never went above the bound plus one batch.
 */
class IngestQueueBoundTest {

    private static final int INSTANCE = 1;
    private static final long BOUND = 32 << 10;

    @RegisterExtension
    final TestResources open = new TestResources();

    /** Records every batch at once but holds its "applied" report while {@link #stalled}: a writer that lags. */
    private static final class StalledWriter implements BatchSink {
        final RecordingSink recorded = new RecordingSink(false);
        final InflightBytes inflight;
        final AtomicLong mostWaiting = new AtomicLong();
        /** the largest batch seen while stalled (nothing is released then, so each step up is one batch) */
        long largestBatch;

        private long lastUsed;
        final List<Runnable> held = new ArrayList<>();
        boolean stalled = true;

        StalledWriter(InflightBytes inflight) {
            this.inflight = inflight;
        }

        @Override
        public void apply(WorkerKey worker, List<KvEvent> events) {
            recorded.apply(worker, events);
        }

        @Override
        public synchronized void apply(
                WorkerKey worker, List<KvEvent> events, Runnable applied, Consumer<Throwable> failed) {
            recorded.apply(worker, events);
            long used = inflight.used();
            mostWaiting.accumulateAndGet(used, Math::max);
            if (stalled) {
                largestBatch = Math.max(largestBatch, used - lastUsed);
                lastUsed = used;
                held.add(applied);
            } else {
                applied.run();
            }
        }

        synchronized void resume() {
            stalled = false;
            held.forEach(Runnable::run);
            held.clear();
        }

        @Override
        public void publisherRestarted(WorkerKey worker) {
            recorded.publisherRestarted(worker);
        }
    }

    /** One engine and a listener of it on one poller, with a budget of {@link #BOUND} and a stalled writer. */
    private record Rig(
            InflightBytes inflight,
            EngineSimulator sim,
            StalledWriter writer,
            EngineListener listener,
            ReplayPermits permits) {

        /** What a failed wait shows besides the two states (each far too long to print whole). */
        String diagnosis() {
            return "held " + sizes(writer.recorded.asGroundTruth(INSTANCE)) + " of the engine's "
                    + sizes(sim.groundTruth()) + " blocks; " + writer.recorded.batches() + " batches recorded, "
                    + writer.recorded.restarts().size() + " drops (restarts, unrecoverable gaps); engine's next seq "
                    + sim.nextSeq() + "; " + sim.replays() + "; replays running " + permits.inUse() + ", waiting "
                    + permits.waiting() + "; listener " + listener.snapshot();
        }

        private static Map<?, Integer> sizes(Map<?, ? extends java.util.Set<Long>> holders) {
            Map<Object, Integer> out = new java.util.TreeMap<>(java.util.Comparator.comparing(String::valueOf));
            holders.forEach((h, blocks) -> out.put(h, blocks.size()));
            return out;
        }

        /** Batch {@code i} of a run of long prefills: 1,000 blocks, ~30 KB. */
        CompletableFuture<Long> prefill(int i) {
            return sim.storeSequence(
                    IntStream.range(i * 4_000, i * 4_000 + 4_000).toArray(), 4);
        }

        /** Waits until the listener holds the engine's state, exact. */
        void awaitEngineState() {
            await().atMost(Duration.ofSeconds(60))
                    .untilAsserted(() -> assertThat(writer.recorded.asGroundTruth(INSTANCE))
                            .as(this::diagnosis)
                            .isEqualTo(sim.groundTruth()));
            await().atMost(Duration.ofSeconds(10))
                    .until(() -> listener.exactness().read().state() == ExactnessState.EXACT);
        }
    }

    private Rig rig(SimulatorBuilder engine, Consumer<ListenerOptions.Draft> options) {
        InflightBytes inflight = new InflightBytes(BOUND);
        IngestPollers pollers = open.add(new IngestPollers(ZmqContext.shared(), 1, 1, inflight));
        EngineSimulator sim = open.add(engine.start());
        StalledWriter writer = new StalledWriter(inflight);
        ReplayPermits permits = new ReplayPermits(ReplayPermits.DEFAULT);
        EngineListener listener = open.listener(
                new ListenerSpec(INSTANCE, 0, sim.endpoint(), sim.replayEndpoint()),
                new SequenceWatermark(),
                writer,
                ListenerOptions.defaults(pollers).with(o -> {
                    o.replayTimeout = Duration.ofSeconds(30);
                    // its own permits, like its own poller and budget: no replay of an earlier test's can hold them
                    o.replayPermits = permits;
                    options.accept(o);
                }));
        Subscriptions.await(listener, sim, 1);
        return new Rig(inflight, sim, writer, listener, permits);
    }

    @Test
    void anOverflowIsAGapThatIsReplayedNeverMoreMemory() {
        // the engine's PUB queue counts messages (vLLM's holds 100,000): a short one overflows the same way with far
        // fewer batches, so the test stays short. The tail check is on, as in the product: the batch sent after the
        // writer moves can find the PUB's queue still full and go too, a dropped tail only that check finds
        Rig rig = rig(EngineSimulator.Options.builder().hwm(10), o -> o.tailCheckAfter = Duration.ofMillis(500));

        // long prefills (~9 MB in all): far more than the bound, the two queues and the kernel's socket buffers
        // hold together
        CompletableFuture<Long> last = null;
        for (int i = 0; i < 300; i++) {
            last = rig.prefill(i);
        }
        last.join();
        await().atMost(Duration.ofSeconds(30)).until(() -> rig.inflight().used() >= BOUND);
        assertThat(rig.writer().recorded.batches())
                .as("the listener stopped reading")
                .isLessThan(50);
        long largestBatch;
        synchronized (rig.writer()) {
            largestBatch = rig.writer().largestBatch;
        }

        rig.writer().resume();
        rig.sim()
                .storeSequence(IntStream.range(10_000_000, 10_000_004).toArray(), 4)
                .join(); // shows the gap, if it gets through
        rig.awaitEngineState();
        assertThat(rig.sim().replays().requests())
                .as("what the engine dropped came back by replay")
                .isPositive();
        assertThat(rig.writer().mostWaiting.get())
                .as("unapplied bytes never above the bound plus one batch")
                .isLessThanOrEqualTo(BOUND + largestBatch);
        assertThat(rig.inflight().used()).isZero();
    }

    /**
     * A gap replayed while the writer is stalled waits for the bound as live reads do: the replay pulls no more
     * than the bound plus a batch per thread into memory (the engine's ROUTER drops what its queue to us cannot
     * hold, and the replay asks again), and once the writer moves the listener ends with the engine's state, exact.
     */
    @Test
    void aReplayWaitsForTheBoundToo() {
        Rig rig = rig(EngineSimulator.Options.builder(), o -> {});

        rig.sim().dropLive(200); // ~30 KB a batch, ~6 MB in all: buffered for replay, never sent live
        for (int i = 0; i < 200; i++) {
            rig.prefill(i);
        }
        rig.sim()
                .storeSequence(IntStream.range(10_000_000, 10_000_004).toArray(), 4)
                .join(); // live: shows the gap [0, 200)
        await().atMost(Duration.ofSeconds(30)).until(() -> rig.sim().replays().requests() > 0);
        await().atMost(Duration.ofSeconds(30)).until(() -> rig.inflight().used() >= BOUND);
        long largestBatch;
        synchronized (rig.writer()) {
            largestBatch = rig.writer().largestBatch;
        }
        // the replay has the whole gap at hand: it must still not pull it in past the bound
        await().during(Duration.ofSeconds(2))
                .atMost(Duration.ofSeconds(5))
                .until(() -> rig.inflight().used() <= BOUND + 2 * largestBatch);
        assertThat(rig.writer().recorded.batches()).as("waiting at the bound").isLessThan(20);

        rig.writer().resume();
        rig.awaitEngineState();
        assertThat(rig.writer().mostWaiting.get())
                .as("unapplied bytes never above the bound plus a batch per thread")
                .isLessThanOrEqualTo(BOUND + 2 * largestBatch);
    }

    /**
     * While a replay waits for the bound, what it holds in memory is its DEALER's receive queue
     * ({@link ReplayClient#RECEIVE_QUEUE} replies), not the engine's answer: the engine's ROUTER (here a probe that
     * queues one reply, so only our queue and the kernel's socket buffers lie between) gets no more off its hands
     * than those hold. Once the replay moves again it asks for the rest from the next seq.
     */
    @Test
    void aWaitingReplayHoldsItsReceiveQueueNotTheAnswer() throws Exception {
        int total = 400;
        byte[] payload = new byte[256 << 10]; // a long prefill's batch: 100 MB for the whole answer
        try (ZContext probeContext = new ZContext();
                ZContext clientContext = new ZContext(1)) {
            ZMQ.Socket router = probeContext.createSocket(SocketType.ROUTER);
            router.setLinger(0);
            router.setRouterMandatory(true);
            router.setSndHWM(1);
            router.setReceiveTimeOut(10_000);
            int port = router.bindToRandomPort("tcp://127.0.0.1");
            CountDownLatch waiting = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            RecordingTarget target = new RecordingTarget(seq -> {
                if (seq == 0) { // the budget is full: wait as Stream.batch does
                    waiting.countDown();
                    awaitQuietly(resume);
                }
            });
            // its own context and permits, and stopped and resumed however the test ends: a replay left waiting in
            // the process's shared context stalled every later test's replay there (CI: four tests timed out after
            // this one failed)
            AtomicBoolean stopped = new AtomicBoolean();
            ReplayClient client = new ReplayClient(
                    clientContext,
                    "tcp://127.0.0.1:" + port,
                    ListenerOptions.defaults()
                            .with(o -> o.replayPermits = new ReplayPermits(ReplayPermits.DEFAULT))
                            .replaySettings(),
                    stopped::get,
                    () -> {});
            try {
                CompletableFuture<ReplayClient.Outcome> outcome = CompletableFuture.supplyAsync(() -> {
                    try {
                        return client.replay(0, total, target);
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                });

                byte[] asker = requestFrom(router, 0, null);
                int accepted = offer(router, asker, 0, total, payload, Duration.ofMillis(500));
                assertThat(waiting.await(10, TimeUnit.SECONDS)).isTrue();
                assertThat(accepted)
                        .as("replies taken off the engine's hands while the replay waits")
                        .isLessThanOrEqualTo(heldBetween(payload.length))
                        .isLessThan(total); // all 400 with jeromq's default queue of 1,000

                resume.countDown();
                byte[] again = requestFrom(router, accepted, asker); // the rest, from the next seq
                // answered as an engine answers every request, until the replay is over: on a loaded machine a pause of
                // the probe can end an answer on the client's side (ReplayClient's idle bound), and it asks again
                answerUntilDone(router, again, accepted, total, payload, outcome);
                assertThat(outcome.get(30, TimeUnit.SECONDS).result()).isEqualTo(IngestMetrics.ReplayResult.OK);
                assertThat(target.taken)
                        .containsExactlyElementsOf(
                                LongStream.range(0, total).boxed().toList());
                assertThat(target.lost).isEmpty();
            } finally {
                stopped.set(true);
                resume.countDown();
            }
        }
    }

    /**
     * How many replies of {@code size} bytes can lie between the probe and a replay that does not read: its receive
     * queue, the kernel's receive and send buffers at their largest (this machine's autotuning limits), and a few in
     * flight.
     */
    private static int heldBetween(int size) throws java.io.IOException {
        long kernel =
                largest("/proc/sys/net/ipv4/tcp_rmem", 32L << 20) + largest("/proc/sys/net/ipv4/tcp_wmem", 4L << 20);
        return (int) (ReplayClient.RECEIVE_QUEUE + kernel / size + 4);
    }

    private static long largest(String file, long otherwise) throws java.io.IOException {
        java.nio.file.Path path = java.nio.file.Path.of(file);
        if (!java.nio.file.Files.isReadable(path)) {
            return otherwise;
        }
        // min, default, max; read as a stream: a /proc file says it is empty, so Files.readString reads a byte
        try (java.io.InputStream in = java.nio.file.Files.newInputStream(path)) {
            String[] limits = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII)
                    .trim()
                    .split("\\s+");
            return Long.parseLong(limits[limits.length - 1]);
        }
    }

    /**
     * Reads the next replay request (["", seq] after the asker's identity), asserts it asks from {@code seq}, returns
     * the asker. Once a request was {@code answered} (else null), stale first requests are read past: on a loaded
     * machine the client may have asked from 0 again on a fresh DEALER (a handshake it did not see in time, or
     * silence), and the request it gave up on may reach the engine after the one the probe answered. A client that
     * really asked from 0 again would go unanswered here and fail the test, so skipping them hides nothing.
     */
    private static byte[] requestFrom(ZMQ.Socket router, long seq, byte[] answered) {
        while (true) {
            ZMsg request = ZMsg.recvMsg(router);
            assertThat(request).as("a replay request").isNotNull();
            assertThat(request.size()).isEqualTo(3);
            byte[] asker = request.getFirst().getData();
            if (answered != null
                    && Frames.readSeq(request.getLast().getData()) == 0
                    && !Arrays.equals(asker, answered)) {
                continue;
            }
            assertThat(request.getLast().getData()).as("asked from").isEqualTo(Frames.seqBytes(seq));
            return asker;
        }
    }

    /**
     * Sends replies {@code from..until-1} to {@code asker} until one is refused for {@code patience} (the queue to it
     * is full) or all are out; returns how many went out.
     */
    private static int offer(
            ZMQ.Socket router, byte[] asker, long from, long until, byte[] payload, Duration patience) {
        long seq = from;
        long refusedSince = 0;
        while (seq < until) {
            if (router.send(asker, ZMQ.SNDMORE | ZMQ.DONTWAIT)) {
                router.send(Frames.EMPTY, ZMQ.SNDMORE);
                router.send(Frames.seqBytes(seq), ZMQ.SNDMORE);
                router.send(payload, 0);
                seq++;
                refusedSince = 0;
            } else if (refusedSince == 0) {
                refusedSince = System.nanoTime();
            } else if (System.nanoTime() - refusedSince > patience.toNanos()) {
                break;
            } else {
                LockSupport.parkNanos(1_000_000);
            }
        }
        return (int) (seq - from);
    }

    /**
     * Sends replies from {@code from} on to {@code asker}, and from the asked seq on to whoever asks again, until
     * {@code done} completes (within a generous deadline): the engine's side of a replay whose client may drop an
     * answer it thinks over and ask for the rest.
     */
    private static void answerUntilDone(
            ZMQ.Socket router, byte[] asker, long from, long until, byte[] payload, CompletableFuture<?> done) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!done.isDone()) {
            assertThat(System.nanoTime() - deadline)
                    .as("the replay ends within 60 s")
                    .isNegative();
            from += offer(router, asker, from, until, payload, Duration.ofMillis(200));
            ZMsg request = ZMsg.recvMsg(router, ZMQ.DONTWAIT);
            if (request != null) {
                assertThat(request.size()).isEqualTo(3);
                asker = request.getFirst().getData();
                from = Frames.readSeq(request.getLast().getData());
            } else {
                LockSupport.parkNanos(10_000_000);
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A listener that stopped reading at the bound hears nothing, but not because the engine went quiet: it does not
     * ask the engine about a dropped tail then (a replay would add to the load that stopped it). Once the writer
     * moves, it reads on and ends with the engine's state, exact.
     */
    @Test
    void aListenerStoppedAtTheBoundIsNotAQuietEngine() {
        Rig rig = rig(EngineSimulator.Options.builder(), o -> o.tailCheckAfter = Duration.ofMillis(200)); // no drops

        CompletableFuture<Long> last = null;
        for (int i = 0; i < 20; i++) { // the bound holds two
            last = rig.prefill(i);
        }
        last.join();
        await().atMost(Duration.ofSeconds(30)).until(() -> rig.inflight().used() >= BOUND);
        // stopped for five times the quiet spell: no tail check meanwhile
        await().during(Duration.ofSeconds(1))
                .atMost(Duration.ofSeconds(5))
                .until(() -> rig.sim().replays().requests() == 0);
        assertThat(rig.writer().recorded.batches())
                .as("still stopped at the bound")
                .isLessThan(20);

        rig.writer().resume();
        rig.awaitEngineState();
    }

    @Test
    void theBoundIsAFlagInBytesUnitsOrAShareOfTheHeap() throws Exception {
        long heap = Runtime.getRuntime().maxMemory();
        assertThat(bound()).isEqualTo(InflightBytes.defaultBudget()).isEqualTo(Math.max(16L << 20, heap / 8));
        assertThat(bound("--ingest-queue-bytes", "1048576")).isEqualTo(1L << 20);
        assertThat(bound("--ingest-queue-bytes", "512k")).isEqualTo(512L << 10);
        assertThat(bound("--ingest-queue-bytes", "256M")).isEqualTo(256L << 20);
        assertThat(bound("--ingest-queue-bytes", "2g")).isEqualTo(2L << 30);
        assertThat(bound("--ingest-queue-bytes", "25%")).isEqualTo(heap / 4);
        for (String bad : List.of("0", "-1", "12x", "150%", "0%", "1t", "")) {
            assertThatThrownBy(() -> IndexerCli.parse(new String[] {"--ingest-queue-bytes", bad}, Map.of()))
                    .as(bad)
                    .isInstanceOf(ConfigException.class)
                    .hasMessageContaining("--ingest-queue-bytes");
        }
        assertThat(IndexerCli.parse(new String[] {"--degraded-hold", "5s"}, Map.of())
                        .config()
                        .ingest()
                        .degradedHold())
                .isEqualTo(Duration.ofSeconds(5));
        assertThat(IndexerCli.parse(new String[0], Map.of()).config().ingest().degradedHold())
                .isEqualTo(Duration.ofMinutes(1));
    }

    private static long bound(String... args) throws Exception {
        return IndexerCli.parse(args, Map.of()).config().ingest().queueBytes();
    }
}
