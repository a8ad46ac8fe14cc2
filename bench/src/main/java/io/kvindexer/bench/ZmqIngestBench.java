package io.kvindexer.bench;

import io.kvindexer.indexer.IndexerApp;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * End-to-end ingest: N engine simulators publish a trace's Stored/Removed batches in the vLLM wire format over
 * loopback ZeroMQ to a real indexer ({@link IndexerApp}) that has them registered. Reports block events applied per
 * second (publish start → a final marker of every worker visible in {@code /query}) and the publish → visible lag
 * of probe markers sent while the load runs (polled through {@code /query}, so it includes one query's latency).
 */
@Command(
        name = "zmq-ingest-bench",
        description = "Engine simulators → ZeroMQ → indexer: block events applied per second and publish→visible lag.")
public final class ZmqIngestBench extends IndexerBench<ZmqIngestBench.Rep> {

    @Option(names = "--publishers", description = "threads feeding the simulators")
    int publishers = 1;

    @Option(names = "--probe-every-ms", description = "one lag probe this often")
    int probeEveryMs = 20;

    @Option(
            names = "--rate",
            description = "block events per second to publish at, paced (0: as fast as the simulators take them)")
    double rate = 0;

    @Option(names = "--window", description = "batches a stream may run ahead of what its listener has applied")
    int window = 16;

    @Option(names = "--warmup", description = "unmeasured runs first")
    int warmup = 1;

    /** One run: block events, the time they took until visible (with --rate: the paced rate), the probe lags. */
    public record Rep(
            long blockEvents,
            long batches,
            double seconds,
            double blockEventsPerSecond,
            double batchesPerSecond,
            double lagP50Ms,
            double lagP99Ms,
            double lagMaxMs,
            int probes,
            double cpuNanosPerBlockEvent,
            double floorBlockEventsPerSecond,
            double floorCpuNanosPerBlockEvent) {

        /** achieved / floor: the share of the bare receive + decode + hash rate the indexer keeps. */
        public double ofFloor() {
            return floorBlockEventsPerSecond > 0 ? blockEventsPerSecond / floorBlockEventsPerSecond : 0;
        }

        Rep withFloor(ZmqIngestFloor.Result floor) {
            return new Rep(
                    blockEvents,
                    batches,
                    seconds,
                    blockEventsPerSecond,
                    batchesPerSecond,
                    lagP50Ms,
                    lagP99Ms,
                    lagMaxMs,
                    probes,
                    cpuNanosPerBlockEvent,
                    floor.blockEventsPerSecond(),
                    floor.cpuNanosPerBlockEvent());
        }
    }

    @Option(
            names = "--no-floor",
            description = "skip the same-run floor (the same frames to bare listeners that"
                    + " decode and hash without an index), e.g. for paced lag runs")
    boolean noFloor;

    public static void main(String[] args) {
        System.exit(new CommandLine(new ZmqIngestBench()).execute(args));
    }

    @Override
    public List<Rep> runBench() throws Exception {
        Workload w = workload.build();
        SimFleet.Encoded frames = SimFleet.Encoded.of(w);
        System.out.printf(
                "workload: %d workers, %d block events (stored %d + removed %d) in %d batches, encoded before the"
                        + " clock starts%n",
                w.spec().workers(),
                w.storedBlocks() + w.removedBlocks(),
                w.storedBlocks(),
                w.removedBlocks(),
                frames.batchCount());
        for (int r = 0; r < warmup; r++) {
            Rep rep = runOnce(frames);
            System.out.printf("warm-up: %.3f M block events/s%n", rep.blockEventsPerSecond() / 1e6);
        }
        List<Rep> reps = new ArrayList<>();
        for (int r = 0; r < runs.repetitions; r++) {
            Rep rep = runOnce(frames);
            if (!noFloor) {
                rep = rep.withFloor(ZmqIngestFloor.run(frames, publishers, window));
            }
            System.out.printf(
                    "rep %d: %.3f M block events/s (%.0f batches/s) in %.2f s; lag p50/p99/max %.2f/%.2f/%.2f ms"
                            + " over %d probes; floor %.3f M/s (%.2f of it); process CPU per block event %.0f ns,"
                            + " floor %.0f ns%n",
                    r + 1,
                    rep.blockEventsPerSecond() / 1e6,
                    rep.batchesPerSecond(),
                    rep.seconds(),
                    rep.lagP50Ms(),
                    rep.lagP99Ms(),
                    rep.lagMaxMs(),
                    rep.probes(),
                    rep.floorBlockEventsPerSecond() / 1e6,
                    rep.ofFloor(),
                    rep.cpuNanosPerBlockEvent(),
                    rep.floorCpuNanosPerBlockEvent());
            reps.add(rep);
        }
        return reps;
    }

    private Rep runOnce(SimFleet.Encoded frames) throws Exception {
        Workload w = frames.workload();
        try (IndexerApp app = startIndexer();
                SimFleet fleet = new SimFleet(frames, new BenchHttp(app.baseUrl()))) {
            fleet.startAndRegister();
            fleet.window(
                    window,
                    worker -> app.workers()
                            .watermark(SimFleet.instanceId(worker), 0)
                            .get());
            BenchHttp probeHttp = new BenchHttp(app.baseUrl());
            AtomicBoolean loading = new AtomicBoolean(true);
            long[] lags = new long[1 << 16];
            int[] probes = {0};
            Thread prober = Thread.ofPlatform().name("lag-probe").start(() -> {
                int worker = 0;
                do {
                    SimFleet.Marker m = fleet.publishMarker(worker);
                    lags[probes[0]++] = m.lagNanos(probeHttp);
                    worker = (worker + 1) % fleet.workers();
                    sleepMs(probeEveryMs);
                } while (loading.get() && probes[0] < lags.length);
            });
            long cpuStart = ZmqIngestFloor.processCpuNanos();
            long start = System.nanoTime();
            fleet.feed(publishers, rate, "feeder");
            fleet.awaitAllApplied(probeHttp);
            long elapsed = System.nanoTime() - start;
            long cpu = ZmqIngestFloor.processCpuNanos() - cpuStart;
            loading.set(false);
            prober.join();
            Latencies lag = new Latencies(lags, probes[0]);
            long blockEvents = w.storedBlocks() + w.removedBlocks();
            double seconds = elapsed / 1e9;
            return new Rep(
                    blockEvents,
                    fleet.batchCount(),
                    seconds,
                    blockEvents / seconds,
                    fleet.batchCount() / seconds,
                    lag.percentileMicros(50) / 1e3,
                    lag.percentileMicros(99) / 1e3,
                    lag.percentileMicros(100) / 1e3,
                    lag.count(),
                    (double) cpu / blockEvents,
                    0,
                    0);
        }
    }

    static void sleepMs(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    void summarize(List<Rep> reps, Map<String, Object> out) {
        out.put("block_events_per_s", Medians.of(reps, Rep::blockEventsPerSecond));
        out.put("floor_block_events_per_s", Medians.of(reps, Rep::floorBlockEventsPerSecond));
        out.put("of_floor", Medians.of(reps, Rep::ofFloor));
        out.put("batches_per_s", Medians.of(reps, Rep::batchesPerSecond));
        out.put("cpu_ns_per_block_event", Medians.of(reps, Rep::cpuNanosPerBlockEvent));
        out.put("floor_cpu_ns_per_block_event", Medians.of(reps, Rep::floorCpuNanosPerBlockEvent));
        out.put("lag_p50_ms", Medians.of(reps, Rep::lagP50Ms));
        out.put("lag_p99_ms", Medians.of(reps, Rep::lagP99Ms));
        out.put("block_events", reps.get(0).blockEvents());
        out.put("workers", workload.workers);
        out.put("block_size", workload.blockSize);
        out.put("threads", threads);
        out.put("index_shards", indexShards);
        out.put("publishers", publishers);
        out.put("window", window);
        out.put("rate", rate);
    }
}
