package io.kvindexer.bench;

import io.kvindexer.indexer.sim.EngineEventEncoder;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimEvent;
import io.kvindexer.indexer.sim.SimulatorBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntToLongFunction;
import java.util.function.Predicate;
import org.zeromq.ZContext;

/**
 * N engine simulators publishing a {@link Workload}'s events in the engine wire format over loopback ZeroMQ to an
 * indexer that has them registered. Each worker's ops are grouped into one batch per request (the Removed and
 * Stored of one engine step), in order.
 */
final class SimFleet implements AutoCloseable {

    static final String MODEL = "bench-model";

    /** Marker token values count down from the top of the u32 range, far from trace ids. */
    private static final AtomicInteger NEXT_MARKER = new AtomicInteger(-1);

    private final Workload workload;
    private final Encoded encoded;
    private final List<EngineSimulator> sims = new ArrayList<>();
    private final BenchHttp http;
    /**
     * One ZeroMQ context (one I/O thread) for all the simulators' sockets: engines run elsewhere in a deployment,
     * and here every extra sender thread takes the two cores from the indexer under test.
     */
    private final ZContext context = new ZContext(1);

    private int window = Integer.MAX_VALUE;
    private IntToLongFunction appliedSeq;

    /** Encodes {@code workload}'s batches first (see {@link Encoded}). */
    SimFleet(Workload workload, BenchHttp http) {
        this(Encoded.of(workload), http);
    }

    /** A fleet that publishes batches encoded earlier, so several runs send the very same bytes. */
    SimFleet(Encoded encoded, BenchHttp http) {
        this.workload = encoded.workload();
        this.encoded = encoded;
        this.http = http;
    }

    /**
     * A workload's Stored/Removed ops as each worker's batches (one per engine step: the ops of one worker at one
     * trace time, in order), encoded once in the vLLM wire format of the simulators' defaults before anything is
     * timed: publishing is then socket sends only, and the indexer run and its floor send the same bytes.
     *
     * @param payloads per worker, its batches' payloads in publish order
     * @param blocks   per worker, the block events of each of those batches
     */
    record Encoded(Workload workload, List<byte[][]> payloads, List<int[]> blocks) {

        static Encoded of(Workload workload) {
            int workers = workload.spec().workers();
            int bs = workload.spec().blockSize();
            EngineSimulator.Options sim = simOptions();
            EngineEventEncoder encoder = new EngineEventEncoder(sim.format(), sim.hashMode());
            double ts = System.currentTimeMillis() / 1000.0;
            List<List<byte[]>> payloads = new ArrayList<>();
            List<List<Integer>> blocks = new ArrayList<>();
            List<List<SimEvent>> open = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                payloads.add(new ArrayList<>());
                blocks.add(new ArrayList<>());
                open.add(new ArrayList<>(2));
            }
            long[] lastTime = new long[workers];
            int[] openBlocks = new int[workers];
            Arrays.fill(lastTime, Long.MIN_VALUE);
            for (Workload.Op op : workload.ops()) {
                if (op.kind() == Workload.Kind.QUERY) {
                    continue;
                }
                int w = op.worker();
                if (lastTime[w] != op.timeMs() && !open.get(w).isEmpty()) {
                    payloads.get(w).add(encoder.encode(ts, open.get(w), sim.dpRank()));
                    blocks.get(w).add(openBlocks[w]);
                    open.get(w).clear();
                    openBlocks[w] = 0;
                }
                lastTime[w] = op.timeMs();
                openBlocks[w] += op.blocks();
                open.get(w)
                        .add(
                                op.kind() == Workload.Kind.STORED
                                        ? EngineSimulator.stored(
                                                op.seqHashes(),
                                                op.hasParent() ? op.parent() : null,
                                                op.tokens(),
                                                bs,
                                                "GPU",
                                                null)
                                        : EngineSimulator.removed(op.seqHashes(), "GPU"));
            }
            List<byte[][]> encoded = new ArrayList<>();
            List<int[]> counts = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                if (!open.get(w).isEmpty()) {
                    payloads.get(w).add(encoder.encode(ts, open.get(w), sim.dpRank()));
                    blocks.get(w).add(openBlocks[w]);
                }
                encoded.add(payloads.get(w).toArray(byte[][]::new));
                counts.add(blocks.get(w).stream().mapToInt(Integer::intValue).toArray());
            }
            return new Encoded(workload, encoded, counts);
        }

        int batchCount() {
            return payloads.stream().mapToInt(p -> p.length).sum();
        }
    }

    /** The simulators' options: the defaults (vLLM map events, u64 hashes, rank 0), no send high-water mark. */
    private static EngineSimulator.Options simOptions() {
        return simBuilder().build();
    }

    private static SimulatorBuilder simBuilder() {
        return EngineSimulator.Options.builder().hwm(0);
    }

    /** Starts the simulators only (the floor run connects its own listeners). */
    void start() {
        for (int w = 0; w < workload.spec().workers(); w++) {
            sims.add(EngineSimulator.start(simBuilder().context(context).build()));
        }
    }

    EngineSimulator sim(int worker) {
        return sims.get(worker);
    }

    /** Starts the simulators, registers each with the indexer and waits until each one's marker is visible. */
    void startAndRegister() {
        int bs = workload.spec().blockSize();
        start();
        for (int w = 0; w < sims.size(); w++) {
            EngineSimulator sim = sims.get(w);
            http.register(instanceId(w), sim.endpoint(), sim.replayEndpoint(), MODEL, bs);
        }
        for (int w = 0; w < sims.size(); w++) {
            awaitJoined(w, m -> m.awaitVisible(http, 200_000_000L));
        }
    }

    /**
     * The slow-joiner window: publishes markers on {@code worker}'s stream until {@code arrived} sees one of them
     * (for a minute at most), so that everything published afterwards reaches the subscriber.
     */
    void awaitJoined(int worker, Predicate<Marker> arrived) {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!arrived.test(publishMarker(worker))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("worker " + worker + " never received a marker");
            }
        }
    }

    /**
     * Publishes every batch from {@code publishers} threads (named {@code name-i}), each taking every
     * {@code publishers}-th worker, and returns when all are sent; {@code blockEventsPerSecond} 0: unpaced.
     */
    void feed(int publishers, double blockEventsPerSecond, String name) throws InterruptedException {
        List<Thread> feeders = new ArrayList<>();
        for (int p = 0; p < publishers; p++) {
            int first = p;
            feeders.add(Thread.ofPlatform()
                    .name(name + "-" + p)
                    .start(() -> feed(first, publishers, blockEventsPerSecond / publishers)));
        }
        for (Thread t : feeders) {
            t.join();
        }
    }

    /**
     * Round-robin over this feeder's workers, one batch each, so every stream advances together; with a rate, each
     * batch waits until the block events before it are due.
     */
    private void feed(int first, int stride, double blockEventsPerSecond) {
        long start = System.nanoTime();
        long sent = 0;
        boolean any = true;
        for (int i = 0; any; i++) {
            any = false;
            for (int worker = first; worker < workers(); worker += stride) {
                if (blockEventsPerSecond > 0) {
                    long due = start + (long) (sent / blockEventsPerSecond * 1e9);
                    long ahead = due - System.nanoTime();
                    if (ahead > 0) {
                        LockSupport.parkNanos(ahead);
                    }
                }
                if (publish(worker, i)) {
                    any = true;
                    sent += blocks(worker, i);
                }
            }
        }
    }

    static long instanceId(int worker) {
        return worker + 1L;
    }

    int workers() {
        return sims.size();
    }

    int batchCount() {
        return encoded.batchCount();
    }

    /** Publishes every batch of {@code worker} as fast as the simulator takes them; returns the last send. */
    CompletableFuture<Long> publishAll(int worker) {
        CompletableFuture<Long> last = CompletableFuture.completedFuture(0L);
        EngineSimulator sim = sims.get(worker);
        for (byte[] payload : encoded.payloads().get(worker)) {
            last = sim.publishPayload(payload);
        }
        return last;
    }

    /**
     * Bounds what {@link #publish} lets through: at most {@code batches} sent on a stream beyond the last seq the
     * receiving listener has applied ({@code appliedSeq} of a worker). Without it a fleet that only sends
     * pre-encoded bytes runs the whole workload ahead into the receivers' queues (hundreds of MB of fresh buffers),
     * which measures the heap, not ingest; an engine's own pace bounds this in a deployment.
     */
    void window(int batches, IntToLongFunction appliedSeq) {
        this.window = batches;
        this.appliedSeq = appliedSeq;
    }

    /** Publishes batch {@code i} of {@code worker} once the window has room; false when there is none. */
    boolean publish(int worker, int i) {
        byte[][] mine = encoded.payloads().get(worker);
        if (i >= mine.length) {
            return false;
        }
        EngineSimulator sim = sims.get(worker);
        if (appliedSeq != null) {
            while (sim.nextSeq() - 1 - appliedSeq.applyAsLong(worker) >= window) {
                LockSupport.parkNanos(50_000);
            }
        }
        sim.publishPayload(mine[i]);
        return true;
    }

    /** Block events in batch {@code i} of {@code worker}; 0 when there is none. */
    int blocks(int worker, int i) {
        int[] mine = encoded.blocks().get(worker);
        return i < mine.length ? mine[i] : 0;
    }

    /** Publishes a one-block Stored with fresh tokens on {@code worker}'s stream. */
    Marker publishMarker(int worker) {
        int bs = workload.spec().blockSize();
        int value = NEXT_MARKER.getAndDecrement();
        int[] tokens = Workload.tokens(new int[] {value}, bs);
        long publishedAt = System.nanoTime();
        sims.get(worker)
                .publish(EngineSimulator.stored(new long[] {Workload.chain(0, value)}, null, tokens, bs, "GPU", null));
        return new Marker(instanceId(worker), BenchHttp.queryBody(MODEL, tokens), bs, publishedAt);
    }

    /**
     * Publishes one marker on every worker's stream, after all that came before, and waits until each is visible:
     * then the indexer has applied everything published so far.
     */
    void awaitAllApplied(BenchHttp http) {
        List<Marker> finals = new ArrayList<>();
        for (int worker = 0; worker < workers(); worker++) {
            finals.add(publishMarker(worker));
        }
        for (Marker m : finals) {
            m.lagNanos(http);
        }
    }

    /** A published marker; visible once {@code /query} credits its worker with the block. */
    record Marker(long instanceId, byte[] queryBody, int blockSize, long publishedAtNanos) {

        /** Polls {@code /query} until visible; returns false after {@code timeoutNanos}. */
        boolean awaitVisible(BenchHttp http, long timeoutNanos) {
            long end = System.nanoTime() + timeoutNanos;
            while (System.nanoTime() < end) {
                if (http.matchedTokens(queryBody, instanceId) >= blockSize) {
                    return true;
                }
                // a back-to-back poll would keep a core busy with HTTP; 0.2 ms is far below the lags measured
                LockSupport.parkNanos(200_000);
            }
            return false;
        }

        /** Polls until visible and returns publish → visible in nanoseconds. */
        long lagNanos(BenchHttp http) {
            if (!awaitVisible(http, 120_000_000_000L)) {
                throw new IllegalStateException("marker of instance " + instanceId + " never became visible");
            }
            return System.nanoTime() - publishedAtNanos;
        }
    }

    @Override
    public void close() {
        for (EngineSimulator sim : sims) {
            sim.close();
        }
        context.close();
    }
}
