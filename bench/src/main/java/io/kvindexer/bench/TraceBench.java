package io.kvindexer.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The in-process trace benchmark, in the shape of Dynamo's {@code mooncake_bench}: a Mooncake trace expanded into
 * engine events and queries ({@link Workload}), replayed open-loop at deadlines against a fresh index
 * ({@link Replay}) with completion-inclusive timing, next to the floor measured in the same process
 * ({@link Floor}). Every figure is the median of {@code --repetitions} runs.
 */
@Command(
        name = "trace-bench",
        description = "Replays a Mooncake trace against the in-process index; prints block ops/s, latencies, "
                + "bytes per membership and the same-process floor.")
public final class TraceBench extends BenchCommand {

    @Mixin
    WorkloadOptions workloadOptions = WorkloadOptions.withWorkers(64);

    @Mixin
    Windows windows = new Windows();

    @Option(
            names = "--threads",
            description = "index writer threads, one index shard each (default: cores - 1, at least 1)",
            showDefaultValue = CommandLine.Help.Visibility.NEVER)
    int threads = Math.max(1, Runtime.getRuntime().availableProcessors() - 1);

    @Option(
            names = "--issuers",
            description = "replay threads issuing queries and submitting events; the floor runs on as many")
    int issuers = 1;

    @Option(
            names = "--prehashed",
            description = "leave token hashing out of the timing, as Dynamo's harness does: "
                    + "queries and events carry precomputed local hashes (events enter as RouterEvents); the floor then "
                    + "does the map operations only")
    boolean prehashed;

    @Mixin
    Runs runs = new Runs();

    @Option(
            names = "--warmup",
            description = "untimed runs before measuring; then more while the JIT compilers are still busy "
                    + "(see --warmup-max)")
    int warmup = 1;

    @Option(
            names = "--warmup-max",
            description = "at most this many untimed runs in all: a run during which the JIT compilers were busy for "
                    + "more than 5 %% of it is followed by another (none with --warmup 0)")
    int warmupMax = 8;

    @Mixin
    JsonFile json = new JsonFile();

    /** what {@link #runBench} did: the untimed runs, and the JIT compilers' time during the measured ones */
    private int warmupsRun;

    private long compilingMeasuredMs;

    @Option(names = "--plot", description = "write a log-log PNG of achieved vs offered block ops/s here")
    Path plot;

    @Option(
            names = "--workers-sweep",
            split = ",",
            paramLabel = "N,N,...",
            description = "also replay the trace "
                    + "partitioned over each of these worker counts at --window-ms: lookup p50/p99 and the probe floor "
                    + "(one hash-map probe per query block) per count, e.g. 8,64,512,1024")
    List<Integer> workersSweep = List.of();

    @Option(names = "--workers-plot", description = "write a log-log PNG of the worker sweep here")
    Path workersPlot;

    /** One measured run. */
    public record Rep(
            double elapsedMs,
            double achieved,
            double floor,
            double lookupP50Us,
            double lookupP99Us,
            double lookupP999Us,
            double applyP99Us,
            long memberships,
            double bytesPerMembership,
            double maxLagMs,
            double idleLookupP50Us,
            double idleLookupP99Us,
            double writerOnCpu,
            double issuerOnCpu) {

        /** Each figure's median over {@code reps}. */
        static Rep median(List<Rep> reps) {
            return new Rep(
                    Medians.of(reps, Rep::elapsedMs),
                    Medians.of(reps, Rep::achieved),
                    Medians.of(reps, Rep::floor),
                    Medians.of(reps, Rep::lookupP50Us),
                    Medians.of(reps, Rep::lookupP99Us),
                    Medians.of(reps, Rep::lookupP999Us),
                    Medians.of(reps, Rep::applyP99Us),
                    (long) Medians.of(reps, Rep::memberships),
                    Medians.of(reps, Rep::bytesPerMembership),
                    Medians.of(reps, Rep::maxLagMs),
                    Medians.of(reps, Rep::idleLookupP50Us),
                    Medians.of(reps, Rep::idleLookupP99Us),
                    Medians.of(reps, Rep::writerOnCpu),
                    Medians.of(reps, Rep::issuerOnCpu));
        }
    }

    /** One window: the offered rate, its repetitions and their medians. */
    public record Point(double windowMs, double offered, Rep median, List<Rep> reps) {
        Point(double windowMs, double offered, List<Rep> reps) {
            this(windowMs, offered, Rep.median(reps), List.copyOf(reps));
        }

        /** The median run finished within 1.10 x the window. */
        public boolean keptUp() {
            return median.elapsedMs() <= 1.10 * windowMs;
        }

        public double achievedOverFloor() {
            return median.achieved() / median.floor();
        }
    }

    /** Everything a run produced; {@code sweep} is empty without {@code --workers-sweep}. */
    public record Report(Workload workload, List<Point> points, List<WorkerSweep.Point> sweep) {
        /** The point with the highest achieved rate (the only one without --sweep). */
        public Point headline() {
            return points.stream()
                    .max(Comparator.comparingDouble(p -> p.median().achieved()))
                    .orElseThrow();
        }
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new TraceBench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Report report = runBench();
        Map<String, Object> out = toJson(report);
        Point h = report.headline();
        Rep m = h.median();
        System.out.printf(
                "headline: achieved %.3f M block ops/s (floor %.3f M, ratio %.2f), lookup p50/p99 %.2f/%.2f us,"
                        + " apply p99 %.1f us, %d memberships, %.1f bytes/membership%n",
                m.achieved() / 1e6,
                m.floor() / 1e6,
                h.achievedOverFloor(),
                m.lookupP50Us(),
                m.lookupP99Us(),
                m.applyP99Us(),
                m.memberships(),
                m.bytesPerMembership());
        if (json.path != null) {
            BenchJson.write(out, json.path);
            System.out.println("wrote " + json.path);
        }
        if (plot != null) {
            WorkloadOptions o = workloadOptions;
            SweepPlot.write(
                    report.points(),
                    plot,
                    SweepPlot.subtitle(
                            o.trace.toString(), o.workers, o.engineBlocks, o.blockSize, threads, issuers, prehashed));
            System.out.println("wrote " + plot);
        }
        if (workersPlot != null && !report.sweep().isEmpty()) {
            WorkersPlot.write(
                    report.sweep(),
                    workersPlot,
                    String.format(
                            "%s, %d blocks per engine, block %d, "
                                    + "%d writer + %d issuer thread(s), %s, window %.0f ms",
                            workloadOptions.trace.getFileName(),
                            workloadOptions.engineBlocks,
                            workloadOptions.blockSize,
                            threads,
                            issuers,
                            prehashed ? "prehashed" : "hashing timed",
                            windows.windowMs));
            System.out.println("wrote " + workersPlot);
        }
        return 0;
    }

    /** Loads, expands, warms up and measures; used by {@link #call()} and by the smoke test. */
    public Report runBench() throws Exception {
        MooncakeTrace expanded = workloadOptions.loadTrace();
        Workload workload = Workload.build(expanded, workloadOptions.spec());
        System.out.printf(
                "workload: %d requests, %d ops, %d block ops (query %d + stored %d + removed %d), "
                        + "span %d ms, %d workers, %d expected memberships, writer threads %d, issuers %d%n",
                expanded.requests().size(),
                workload.ops().length,
                workload.blockOps(),
                workload.queryBlocks(),
                workload.storedBlocks(),
                workload.removedBlocks(),
                workload.spanMs(),
                workloadOptions.workers,
                workload.expectedMemberships(),
                threads,
                issuers);
        if (prehashed) {
            workload.localHashes(); // before any baseline heap measurement and outside the timing
        }
        double[] replayWindows = windows.all();
        warmupsRun = WarmUp.run(warmup, warmupMax, () -> {
            Floor.run(workload, issuers, prehashed);
            Replay.run(workload, replayWindows[0], threads, issuers, false, prehashed);
        });
        long compiledBefore = WarmUp.compileMillis();
        List<Point> points = new ArrayList<>();
        for (double window : replayWindows) {
            List<Rep> reps = new ArrayList<>();
            for (int r = 0; r < runs.repetitions; r++) {
                reps.add(measure(workload, window));
            }
            Point p = new Point(window, workload.blockOps() / (window / 1e3), reps);
            points.add(p);
            Rep m = p.median();
            System.out.printf(
                    "window %9.1f ms: offered %8.3f M, achieved %8.3f M block ops/s%s, floor %8.3f M (x%.2f), "
                            + "lookup p50/p99 %.2f/%.2f us (idle %.2f/%.2f), apply p99 %.1f us, %.1f B/membership, "
                            + "on CPU writer %.0f %% issuer %.0f %%%n",
                    window,
                    p.offered() / 1e6,
                    m.achieved() / 1e6,
                    p.keptUp() ? " (kept up)" : " (behind)",
                    m.floor() / 1e6,
                    p.achievedOverFloor(),
                    m.lookupP50Us(),
                    m.lookupP99Us(),
                    m.idleLookupP50Us(),
                    m.idleLookupP99Us(),
                    m.applyP99Us(),
                    m.bytesPerMembership(),
                    100 * m.writerOnCpu(),
                    100 * m.issuerOnCpu());
        }
        compilingMeasuredMs = WarmUp.compileMillis() - compiledBefore;
        System.out.printf(
                "warm-up: %d untimed runs; the JIT compilers then ran %d ms during the measured ones%n",
                warmupsRun, compilingMeasuredMs);
        List<WorkerSweep.Point> sweepPoints = workersSweep.isEmpty()
                ? List.of()
                : WorkerSweep.run(
                        expanded,
                        workloadOptions.spec(),
                        workersSweep,
                        windows.windowMs,
                        threads,
                        issuers,
                        prehashed,
                        runs.repetitions,
                        warmup,
                        warmupMax);
        return new Report(workload, points, sweepPoints);
    }

    private Rep measure(Workload workload, double window) throws InterruptedException {
        Floor.Result floor = Floor.run(workload, issuers, prehashed);
        Replay.Result run = Replay.run(workload, window, threads, issuers, true, prehashed);
        double ops = workload.blockOps();
        return new Rep(
                run.elapsedNanos() / 1e6,
                ops / (run.elapsedNanos() / 1e9),
                ops / (floor.elapsedNanos() / 1e9),
                run.lookup().percentileMicros(50),
                run.lookup().percentileMicros(99),
                run.lookup().percentileMicros(99.9),
                run.apply().percentileMicros(99),
                run.memberships(),
                run.memberships() == 0 ? Double.NaN : (double) run.heapBytes() / run.memberships(),
                run.maxLagNanos() / 1e6,
                run.idleLookup().percentileMicros(50),
                run.idleLookup().percentileMicros(99),
                run.writerOnCpu(),
                run.issuerOnCpu());
    }

    Map<String, Object> toJson(Report report) {
        Workload w = report.workload();
        Map<String, Object> out = new LinkedHashMap<>();
        Point h = report.headline();
        putFigures(out, h);
        out.put("window_ms", h.windowMs());
        Map<String, Object> corpus = new LinkedHashMap<>();
        corpus.put("ops", w.ops().length);
        corpus.put("queries", w.queries());
        corpus.put("block_ops", w.blockOps());
        corpus.put("query_blocks", w.queryBlocks());
        corpus.put("stored_blocks", w.storedBlocks());
        corpus.put("removed_blocks", w.removedBlocks());
        corpus.put("expected_memberships", w.expectedMemberships());
        corpus.put("span_ms", w.spanMs());
        out.put("corpus", corpus);
        Map<String, Object> config = workloadOptions.toJson();
        config.put("threads", threads);
        config.put("issuers", issuers);
        config.put("prehashed", prehashed);
        config.put("repetitions", runs.repetitions);
        config.put("warmup_runs", warmupsRun);
        config.put("jit_compiling_ms_measured", compilingMeasuredMs);
        config.putAll(Machine.toJson());
        out.put("config", config);
        List<Map<String, Object>> pts = new ArrayList<>();
        for (Point p : report.points()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("window_ms", p.windowMs());
            putFigures(m, p);
            m.put("reps", p.reps());
            pts.add(m);
        }
        out.put("points", pts);
        out.put("sweep", report.sweep());
        return out;
    }

    /** One point's figures, as the headline and each entry of {@code points} write them. */
    private static void putFigures(Map<String, Object> m, Point p) {
        Rep median = p.median();
        m.put("offered_block_ops_per_s", p.offered());
        m.put("achieved_block_ops_per_s", median.achieved());
        m.put("kept_up", p.keptUp());
        m.put("lookup_p50_us", median.lookupP50Us());
        m.put("lookup_p99_us", median.lookupP99Us());
        m.put("lookup_p999_us", median.lookupP999Us());
        m.put("apply_p99_us", median.applyP99Us());
        m.put("memberships", median.memberships());
        m.put("bytes_per_membership", median.bytesPerMembership());
        m.put("floor_block_ops_per_s", median.floor());
        m.put("idle_lookup_p50_us", median.idleLookupP50Us());
        m.put("idle_lookup_p99_us", median.idleLookupP99Us());
        m.put("achieved_over_floor", p.achievedOverFloor());
    }
}
