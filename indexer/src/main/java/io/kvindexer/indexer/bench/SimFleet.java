package io.kvindexer.indexer.bench;

import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

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
    private final List<EngineSimulator> sims = new ArrayList<>();
    private final List<List<List<SimEvent>>> batches = new ArrayList<>();
    private final List<List<Integer>> batchBlocks = new ArrayList<>();
    private final BenchHttp http;

    SimFleet(Workload workload, BenchHttp http) {
        this.workload = workload;
        this.http = http;
        int workers = workload.spec().workers();
        for (int w = 0; w < workers; w++) {
            batches.add(new ArrayList<>());
            batchBlocks.add(new ArrayList<>());
        }
        long[] lastTime = new long[workers];
        Arrays.fill(lastTime, Long.MIN_VALUE);
        int bs = workload.spec().blockSize();
        for (Workload.Op op : workload.ops()) {
            if (op.kind() == Workload.Kind.QUERY) {
                continue;
            }
            List<List<SimEvent>> mine = batches.get(op.worker());
            List<Integer> blocks = batchBlocks.get(op.worker());
            if (lastTime[op.worker()] != op.timeMs() || mine.isEmpty()) {
                mine.add(new ArrayList<>(2));
                blocks.add(0);
                lastTime[op.worker()] = op.timeMs();
            }
            blocks.set(blocks.size() - 1, blocks.get(blocks.size() - 1) + op.blocks());
            mine.get(mine.size() - 1)
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
    }

    /** Starts the simulators only (the floor run connects its own listeners). */
    void start() {
        for (int w = 0; w < workload.spec().workers(); w++) {
            sims.add(EngineSimulator.Options.builder().hwm(0).start());
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
        // the slow-joiner window: keep publishing markers until one arrives, for every worker
        for (int w = 0; w < sims.size(); w++) {
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (true) {
                Marker m = publishMarker(w);
                if (m.awaitVisible(http, 200_000_000L)) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("worker " + w + " never became visible in /query");
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
        return batches.stream().mapToInt(List::size).sum();
    }

    /** Publishes every batch of {@code worker} as fast as the simulator takes them; returns the last send. */
    CompletableFuture<Long> publishAll(int worker) {
        CompletableFuture<Long> last = CompletableFuture.completedFuture(0L);
        EngineSimulator sim = sims.get(worker);
        for (List<SimEvent> batch : batches.get(worker)) {
            last = sim.publish(batch);
        }
        return last;
    }

    /** Publishes batch {@code i} of {@code worker}; false when there is none. */
    boolean publish(int worker, int i) {
        List<List<SimEvent>> mine = batches.get(worker);
        if (i >= mine.size()) {
            return false;
        }
        sims.get(worker).publish(mine.get(i));
        return true;
    }

    /** Block events in batch {@code i} of {@code worker}; 0 when there is none. */
    int blocks(int worker, int i) {
        List<Integer> mine = batchBlocks.get(worker);
        return i < mine.size() ? mine.get(i) : 0;
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
                Thread.onSpinWait();
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
    }
}
