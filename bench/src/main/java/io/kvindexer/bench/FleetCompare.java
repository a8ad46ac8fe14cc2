package io.kvindexer.bench;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import io.kvindexer.indexer.sim.EngineEventEncoder;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimEvent;
import it.unimi.dsi.fastutil.HashCommon;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Issue 22 goal 3 as a same-run comparison: one engine against {@code engines} engines, the same workload but for the
 * number of engines. Both sides are the same libzmq publishers ({@link FleetPublishers}, processes of their own)
 * sending the same number of pre-encoded batches of the same shape to a fresh indexer: every batch removes the
 * {@code half} blocks its engine stored {@value #ROUNDS} rounds before (a round: one batch from each fleet engine, so
 * {@code ROUNDS x engines} batches before for the single engine, 2 for a fleet engine) and stores {@code half} new
 * ones. Half the block events are removals, and the index holds the same {@code ROUNDS x engines x half} blocks
 * throughout in both cases. One engine sends all {@code total} batches; the fleet sends {@code total / engines} per
 * engine, round-robin. Before the clock each side stores those {@code ROUNDS x engines} batches (so every measured
 * batch has its removals) and every batch is encoded.
 *
 * <p>Throughput: every publisher sends everything at once (send high-water mark lifted: queued at the publisher, not
 * dropped); block events / (send → every engine's watermark at its last batch and a writer barrier after that). Lag: the same batches paced at
 * {@code rate} block events/s in total, each batch due at its own moment (message {@code m} of a process at
 * {@code start + m / its rate}); lag = sent → applied: from the moment the publisher's send call returned (it
 * stamps each message, in epoch µs) to the moment the index's writer applied the batch (stamped on the writer thread through
 * the watermark's {@link SequenceWatermark#onApplied hook}: no observer runs barriers through the writer's queue). The
 * hook also has when the listener handed the batch to the index, which splits each lag into sent → handed to the
 * writer (the publisher's socket, the kernel, the poller's read and decode) and handed → applied (the writer's queue
 * and the apply), printed per run and pooled.
 * The due → applied lag, which also counts a publisher's sends behind its schedule, is printed beside it. The lags (in µs)
 * are pooled over every paced batch of all repetitions of a side, so that one collection pause in one run of
 * a few seconds is not the p99 by itself, and each rep's p99 is printed beside them (the spread that "the same p99" is
 * judged against). Each measured window starts on a collected heap ({@code System.gc()} after the batches are encoded), as in
 * an indexer that has run a while: the indexer shares this JVM with the bench loop, whose encoding garbage and whose
 * earlier runs' indexes would otherwise be collected inside the next window. The collections inside each window are
 * printed with it. The single engine runs right before the fleet in each repetition.
 */
final class FleetCompare {

    /** rounds between a block's store and its removal */
    static final int ROUNDS = 2;

    private static final String MODEL = "m";

    private final int blockSize;
    private final int half;
    private final int total;
    private final FleetPublishers.Kind kind;
    /** batches stored before the clock (and held in the index throughout), over all engines */
    private final int held;

    /**
     * @param blockSize tokens per block
     * @param batchEvents block events per batch (half stored, half removed)
     * @param total batches per measurement, over all engines
     */
    FleetCompare(FleetPublishers.Kind kind, int fleetEngines, int blockSize, int batchEvents, int total) {
        this.kind = kind;
        this.held = ROUNDS * fleetEngines;
        this.blockSize = blockSize;
        this.half = batchEvents / 2;
        this.total = total;
    }

    /**
     * {@code FleetBench --compare}: for each repetition the single engine then the fleet, all at once; then both paced
     * at half the single engine's median (or {@code --lag-rate}). Prints each run, the medians and the same-run ratios.
     */
    static void main(String[] args) throws Exception {
        int engines = 1024;
        int processes = 1;
        int blockSize = 16;
        int batchEvents = 256;
        int total = 16_384;
        int reps = 3;
        int warmUps = 1;
        double lagRate = 0;
        FleetPublishers.Kind kind = FleetPublishers.Kind.LIBZMQ;
        boolean withSingle = true;
        boolean withLag = true;
        boolean withThroughput = true;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--compare" -> {}
                case "--engines" -> engines = Integer.parseInt(args[++i]);
                case "--processes" -> processes = Integer.parseInt(args[++i]);
                case "--block-size" -> blockSize = Integer.parseInt(args[++i]);
                case "--batch-events" -> batchEvents = Integer.parseInt(args[++i]);
                case "--total-batches" -> total = Integer.parseInt(args[++i]);
                case "--repetitions" -> reps = Integer.parseInt(args[++i]);
                case "--warm-ups" -> warmUps = Integer.parseInt(args[++i]);
                case "--lag-rate" -> lagRate = Double.parseDouble(args[++i]);
                case "--fleet-only" -> withSingle = false; // for a profile of the fleet alone
                case "--no-lag" -> withLag = false;
                case "--lag-only" -> withThroughput = false; // with --lag-rate
                case "--publishers" ->
                    kind = FleetPublishers.Kind.valueOf(args[++i].toUpperCase(java.util.Locale.ROOT));
                default -> throw new IllegalArgumentException("unknown flag " + args[i]);
            }
        }
        FleetCompare c = new FleetCompare(kind, engines, blockSize, batchEvents, total);
        System.out.printf(
                "same-run comparison: 1 engine vs %d engines (%s publishers, %d process(es)); each run %d batches of %d block"
                        + " events (half stored, half removed), block size %d, %d block events%n",
                engines, kind, processes, total, batchEvents, blockSize, c.blockEvents());
        List<Result> single = new ArrayList<>();
        List<Result> fleet = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        if (!withThroughput && lagRate <= 0) {
            throw new IllegalArgumentException("--lag-only needs --lag-rate");
        }
        // not counted: the first run in the JVM is the single engine's, on cold code, and made repetition 1's ratio
        // the highest of every earlier session (1.1-1.7 where the warm repetitions gave 0.7-0.9)
        for (int w = 0; w < warmUps; w++) {
            if (withSingle) {
                c.print("warm-up, not counted", c.run(1, 1, 0));
            }
            c.print("warm-up, not counted", c.run(engines, processes, 0));
        }
        for (int r = 0; withThroughput && r < reps; r++) {
            if (withSingle) {
                single.add(c.print("all at once", c.run(1, 1, 0)));
            }
            fleet.add(c.print("all at once", c.run(engines, processes, 0)));
            if (withSingle) {
                ratios.add(fleet.getLast().blockEventsPerSecond()
                        / single.getLast().blockEventsPerSecond());
                System.out.printf("rep %d: fleet / single %.2f%n", r + 1, ratios.getLast());
            }
        }
        if (!withSingle) {
            return;
        }
        double singleRate = Medians.of(single, Result::blockEventsPerSecond);
        if (withThroughput) {
            System.out.printf(
                    "throughput medians: single %.3f M, fleet %.3f M block events/s; fleet / single per rep %s, median"
                            + " %.2f%n",
                    singleRate / 1e6,
                    Medians.of(fleet, Result::blockEventsPerSecond) / 1e6,
                    ratios,
                    Medians.of(ratios, Double::doubleValue));
        }
        if (!withLag) {
            return;
        }
        double rate = lagRate > 0 ? lagRate : singleRate / 2;
        List<Result> singleLag = new ArrayList<>();
        List<Result> fleetLag = new ArrayList<>();
        for (int r = 0; r < reps; r++) {
            singleLag.add(c.print("paced at " + Math.round(rate), c.run(1, 1, rate)));
            fleetLag.add(c.print("paced at " + Math.round(rate), c.run(engines, processes, rate)));
        }
        Lags sent = Lags.of(singleLag, fleetLag, Result::lags);
        Lags due = Lags.of(singleLag, fleetLag, Result::dueLags);
        Lags toWriter = Lags.of(singleLag, fleetLag, Result::toWriter);
        Lags inWriter = Lags.of(singleLag, fleetLag, Result::inWriter);
        System.out.printf("paced at %.3f M block events/s, %d reps, lags in µs:%n", rate / 1e6, reps);
        sent.print("sent -> applied");
        due.print("due -> applied (counting the publishers' late sends)");
        toWriter.print("of which sent -> handed to the writer");
        inWriter.print("and handed -> applied (the writer's queue and apply)");
    }

    /**
     * The paced lags of both sides: every batch of all reps pooled, and each rep's p99, so that a reader can see
     * whether the fleet's p99 lies within the single engine's spread from rep to rep ("the same p99").
     */
    record Lags(long[] single, long[] fleet, long[] singleP99s, long[] fleetP99s) {

        static Lags of(List<Result> single, List<Result> fleet, java.util.function.Function<Result, long[]> lags) {
            return new Lags(pooled(single, lags), pooled(fleet, lags), p99s(single, lags), p99s(fleet, lags));
        }

        private static long[] p99s(List<Result> runs, java.util.function.Function<Result, long[]> lags) {
            return runs.stream().mapToLong(r -> percentile(lags.apply(r), 99)).toArray();
        }

        /** The goal's ratio: the fleet's pooled p99 over the single engine's (1 µs at least below). */
        double ratio() {
            return percentile(fleet, 99) / (double) Math.max(1, percentile(single, 99));
        }

        void print(String what) {
            System.out.printf(
                    "  %s: pooled p50/p99/max single %d / %d / %d, fleet %d / %d / %d; fleet p99 / single p99 %.2f;"
                            + " p99 per rep single %s (median %d), fleet %s (median %d); fleet median / single median"
                            + " %.2f%n",
                    what,
                    percentile(single, 50),
                    percentile(single, 99),
                    max(single),
                    percentile(fleet, 50),
                    percentile(fleet, 99),
                    max(fleet),
                    ratio(),
                    Arrays.toString(singleP99s),
                    median(singleP99s),
                    Arrays.toString(fleetP99s),
                    median(fleetP99s),
                    median(fleetP99s) / (double) Math.max(1, median(singleP99s)));
        }

        private static long median(long[] values) {
            long[] sorted = values.clone();
            Arrays.sort(sorted);
            return sorted.length == 0 ? 0 : sorted[(sorted.length - 1) / 2];
        }
    }

    /** Every paced batch's lag of these runs, sorted: one stall in one run is a smaller share of them. */
    private static long[] pooled(List<Result> runs, java.util.function.Function<Result, long[]> lags) {
        return runs.stream()
                .flatMapToLong(r -> Arrays.stream(lags.apply(r)))
                .sorted()
                .toArray();
    }

    private static long max(long[] sorted) {
        return sorted.length == 0 ? 0 : sorted[sorted.length - 1];
    }

    /** The {@code p}th percentile of sorted lags (0 when none). */
    private static long percentile(long[] sorted, int p) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, sorted.length * p / 100)];
    }

    /** "p50/p99/max" of sorted lags. */
    private static String spread(long[] sorted) {
        return percentile(sorted, 50) + "/" + percentile(sorted, 99) + "/" + max(sorted);
    }

    private Result print(String what, Result r) {
        System.out.printf(
                "  %4d engine(s), %s: %.3f M block events/s (%.2f s); lag sent -> applied p50/p99/max %s µs, due ->"
                        + " applied %s µs (sent -> handed to the writer %s, handed -> applied %s); %d batches"
                        + " applied; publishers' CPU %.2f s; indexer process CPU %.0f ns, allocated %.0f B per block"
                        + " event; writer threads on CPU %.0f %% of the window (%.0f ns per block event; %d waits, %d ms;"
                        + " writers switched %d / preempted %d times, waited for a core %d ms), pollers %.0f %% (%.0f ns; switched %d / preempted"
                        + " %d times, waited for a core %d ms); the machine busy %.2f cores; GC %d collections, %d ms; gaps %s%n",
                r.engines(),
                what,
                r.blockEventsPerSecond() / 1e6,
                r.seconds(),
                spread(r.lags()),
                spread(r.dueLags()),
                spread(r.toWriter()),
                spread(r.inWriter()),
                r.applied(),
                r.publisherCpuSeconds(),
                r.indexerCpuNanosPerBlockEvent(),
                (double) r.heap().allocated() / blockEvents(),
                100 * r.writers().cpuNanos() / (r.seconds() * 1e9),
                (double) r.writers().cpuNanos() / blockEvents(),
                r.writers().waits(),
                r.writers().waitedMillis(),
                r.writers().scheduling()[0],
                r.writers().scheduling()[1],
                r.writers().scheduling()[2] / 1_000_000,
                100 * r.pollers().cpuNanos() / (r.seconds() * 1e9),
                (double) r.pollers().cpuNanos() / blockEvents(),
                r.pollers().scheduling()[0],
                r.pollers().scheduling()[1],
                r.pollers().scheduling()[2] / 1_000_000,
                r.machineBusyCores(),
                r.heap().collections(),
                r.heap().millis(),
                r.gaps());
        return r;
    }

    long blockEvents() {
        return (long) total * half * 2;
    }

    /**
     * What one measurement of {@code engines} engines gave; paced, {@code lags} (sent → applied), {@code dueLags}
     * (due → applied), {@code toWriter} (sent → handed to the writer) and {@code inWriter} (handed → applied) in µs,
     * each sorted.
     */
    record Result(
            int engines,
            double blockEventsPerSecond,
            double seconds,
            double lagP50Micros,
            double lagP99Micros,
            double lagMaxMicros,
            int applied,
            double publisherCpuSeconds,
            double indexerCpuNanosPerBlockEvent,
            String gaps,
            long[] lags,
            long[] dueLags,
            long[] toWriter,
            long[] inWriter,
            Heap heap,
            Threads writers,
            Threads pollers,
            double machineBusyCores) {}

    /** This machine's CPU time so far, in USER_HZ ticks (Linux {@code /proc/stat}): {busy, all}; zeros elsewhere. */
    static long[] machineTicks() {
        try {
            String[] f =
                    Files.readAllLines(Path.of("/proc/stat")).getFirst().trim().split("\\s+");
            long all = 0;
            for (int i = 1; i < f.length && i <= 8; i++) { // user nice system idle iowait irq softirq steal
                all += Long.parseLong(f[i]);
            }
            return new long[] {all - Long.parseLong(f[4]) - Long.parseLong(f[5]), all};
        } catch (IOException | RuntimeException e) {
            return new long[2];
        }
    }

    /**
     * How the scheduler treated this process's threads whose name starts with {@code prefix} so far (Linux: as
     * {@code /proc/self/task/N/comm} has it, at most 15 characters): {voluntary (a wait: a poller in its selector, a
     * writer on its empty queue), involuntary (preempted: the core went to another thread), nanoseconds runnable but
     * waiting for a core ({@code schedstat}'s second field)}.
     */
    static long[] scheduling(String prefix) {
        long[] sum = new long[3];
        String name = prefix.substring(0, Math.min(15, prefix.length()));
        try (var tasks = Files.list(Path.of("/proc/self/task"))) {
            for (Path task : tasks.toList()) {
                try {
                    if (!Files.readString(task.resolve("comm")).startsWith(name)) {
                        continue;
                    }
                    sum[2] += runQueueNanos(task);
                    for (String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")) {
                            sum[0] += Long.parseLong(
                                    line.substring(line.indexOf(':') + 1).trim());
                        } else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
                            sum[1] += Long.parseLong(
                                    line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                } catch (IOException e) {
                    // the thread ended since the listing
                }
            }
        } catch (IOException e) {
            return sum; // not Linux: none counted
        }
        return sum;
    }

    /** A thread's time runnable but not running so far (Linux {@code /proc/.../schedstat}); 0 where unreadable. */
    private static long runQueueNanos(Path task) {
        try {
            return Long.parseLong(
                    Files.readString(task.resolve("schedstat")).trim().split(" ")[1]);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /**
     * What the threads whose name starts with a prefix did in a window: their CPU time and how often and how long they
     * waited (parked: a writer on its empty queue, a poller in its selector is not counted, it is RUNNABLE in epoll).
     */
    record Threads(long cpuNanos, long waits, long waitedMillis, long[] scheduling) {

        /** how {@code IndexWriters} and {@code IngestPollers} name their threads */
        static final String WRITERS = "index-writer-", POLLERS = "kv-ingest-poller-";

        static java.util.Map<Long, Threads> now(String prefix) {
            var mx = ManagementFactory.getThreadMXBean();
            if (mx.isThreadContentionMonitoringSupported() && !mx.isThreadContentionMonitoringEnabled()) {
                mx.setThreadContentionMonitoringEnabled(true); // for the waited times
            }
            java.util.Map<Long, Threads> out = new java.util.HashMap<>();
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith(prefix)) {
                    var info = mx.getThreadInfo(t.threadId());
                    long cpu = mx.getThreadCpuTime(t.threadId());
                    if (info != null && cpu >= 0) {
                        out.put(t.threadId(), new Threads(cpu, info.getWaitedCount(), info.getWaitedTime(), null));
                    }
                }
            }
            return out;
        }

        /**
         * Summed over the threads alive now, since {@code before}; with {@code busiest}, only the one that used the
         * most CPU (the writer of a one-shard index: the other writer threads idle all along).
         */
        static Threads since(
                String prefix, java.util.Map<Long, Threads> before, long[] schedulingBefore, boolean busiest) {
            long cpu = 0;
            long waits = 0;
            long millis = 0;
            Threads none = new Threads(0, 0, 0, null);
            for (var t : now(prefix).entrySet()) {
                Threads b = before.getOrDefault(t.getKey(), none);
                long used = t.getValue().cpuNanos() - b.cpuNanos();
                if (busiest && used <= cpu) {
                    continue;
                }
                cpu = busiest ? used : cpu + used;
                waits = (busiest ? 0 : waits) + t.getValue().waits() - b.waits();
                millis = (busiest ? 0 : millis) + t.getValue().waitedMillis() - b.waitedMillis();
            }
            long[] sched = FleetCompare.scheduling(prefix);
            return new Threads(cpu, waits, millis, new long[] {
                sched[0] - schedulingBefore[0], sched[1] - schedulingBefore[1], sched[2] - schedulingBefore[2]
            });
        }
    }

    /**
     * What this JVM (indexer and bench loop) allocated and collected in a measured window: the bytes its threads
     * allocated, its collections and their time.
     */
    record Heap(long allocated, long collections, long millis) {

        /** Since {@code mark}: the bytes of the threads alive now (one that ended in between takes its bytes along). */
        static Heap since(Mark mark) {
            Mark now = Mark.now();
            long allocated = 0;
            for (var thread : now.bytes().entrySet()) {
                allocated += thread.getValue() - mark.bytes().getOrDefault(thread.getKey(), 0L);
            }
            return new Heap(allocated, now.collections() - mark.collections(), now.millis() - mark.millis());
        }

        /** Each live thread's allocated bytes so far, by thread id, and the collections so far. */
        record Mark(java.util.Map<Long, Long> bytes, long collections, long millis) {

            static Mark now() {
                long count = 0;
                long millis = 0;
                for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
                    count += Math.max(0, gc.getCollectionCount());
                    millis += Math.max(0, gc.getCollectionTime());
                }
                var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
                long[] ids = threads.getAllThreadIds();
                long[] allocated = threads.getThreadAllocatedBytes(ids);
                java.util.Map<Long, Long> bytes = new java.util.HashMap<>();
                for (int i = 0; i < ids.length; i++) {
                    if (allocated[i] >= 0) { // -1: ended since the ids were listed
                        bytes.put(ids[i], allocated[i]);
                    }
                }
                return new Mark(bytes, count, millis);
            }
        }
    }

    /** One measurement: a fresh indexer, fresh publishers; {@code rate} 0: all at once, else paced. */
    Result run(int engines, int processes, double rate) throws Exception {
        if (total % engines != 0) {
            throw new IllegalArgumentException("--total-batches must be a multiple of --engines");
        }
        int perEngine = total / engines;
        int window = held / engines; // this engine's batches between a store and its removal
        // the indexer closes first: its listeners would log every publisher that quit before it
        try (FleetPublishers pubs = new FleetPublishers(kind, engines, processes, blockSize, 0);
                IndexerApp app = IndexerApp.start(IndexerConfig.defaults())) {
            BenchHttp http = new BenchHttp(app.baseUrl());
            for (int i = 0; i < engines; i++) {
                http.register(i + 1, pubs.endpoint(i), null, MODEL, blockSize);
            }
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (app.workers().listenerCounts().get(ListenerStatus.ACTIVE) < engines || pubs.subscribed() < engines) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the engines did not all become active and subscribed");
                }
                Thread.sleep(100);
            }
            SequenceWatermark[] marks = new SequenceWatermark[engines];
            for (int i = 0; i < engines; i++) {
                marks[i] = app.workers().watermark(i + 1, 0);
            }
            List<Path> files = new ArrayList<>();
            try {
                load(pubs, files, 0, window, window); // the warm-up: every engine's first stores
                pubs.each("send");
                awaitAll(marks, window - 1, 120_000_000_000L);
                app.indexers().flushAll().get();
                List<Path> measured = load(pubs, files, window, perEngine, window);
                // the clock starts on a collected heap, as in an indexer that has run a while: the encoding's garbage,
                // the earlier runs' indexes and this one's registrations are not collected inside the measured window
                System.gc();
                Stamps stamps = rate > 0 ? stampApplies(marks, window, perEngine) : null;
                double cpuBefore = pubs.cpuSeconds();
                long indexerCpu = ZmqIngestFloor.processCpuNanos();
                Heap.Mark heap = Heap.Mark.now();
                var writersBefore = Threads.now(Threads.WRITERS);
                var pollersBefore = Threads.now(Threads.POLLERS);
                long[] machine = machineTicks();
                long[] writerScheduling = scheduling(Threads.WRITERS);
                long[] pollerScheduling = scheduling(Threads.POLLERS);
                long start = System.nanoTime();
                for (int p = 0; p < pubs.processes(); p++) {
                    double share = rate * pubs.size(p) / engines / (2.0 * half); // this process's batches per second
                    pubs.tell(p, rate > 0 ? "send " + share : "send");
                }
                long last = window + perEngine - 1L;
                Result r;
                if (rate > 0) {
                    r = pacedLags(pubs, measured, stamps, perEngine, rate, start);
                } else {
                    int done = awaitAll(marks, last, 60_000_000_000L);
                    app.indexers().flushAll().get(); // a listener's watermark passes a batch when handed to the index
                    double seconds = (System.nanoTime() - start) / 1e9;
                    if (done < engines) {
                        stalled(marks, last);
                    }
                    pubs.answers();
                    r = new Result(
                            engines,
                            blockEvents() / seconds,
                            seconds,
                            0,
                            0,
                            0,
                            done * perEngine,
                            0,
                            0,
                            "",
                            new long[0],
                            new long[0],
                            new long[0],
                            new long[0],
                            null,
                            null,
                            null,
                            0);
                }
                Heap inWindow = Heap.since(heap);
                double publisherCpu = pubs.cpuSeconds() - cpuBefore;
                double indexerNs = (double) (ZmqIngestFloor.processCpuNanos() - indexerCpu) / blockEvents();
                return new Result(
                        engines,
                        r.blockEventsPerSecond(),
                        r.seconds(),
                        r.lagP50Micros(),
                        r.lagP99Micros(),
                        r.lagMaxMicros(),
                        r.applied(),
                        publisherCpu,
                        indexerNs,
                        FleetBench.verifiedGaps(app),
                        r.lags(),
                        r.dueLags(),
                        r.toWriter(),
                        r.inWriter(),
                        inWindow,
                        Threads.since(Threads.WRITERS, writersBefore, writerScheduling, true),
                        Threads.since(Threads.POLLERS, pollersBefore, pollerScheduling, false),
                        (machineTicks()[0] - machine[0]) / 100.0 / r.seconds()); // USER_HZ is 100
            } finally {
                for (Path f : files) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }

    /** What a run that did not finish left: how many engines stopped at which seq, the unapplied bytes. */
    private static void stalled(SequenceWatermark[] marks, long last) {
        java.util.TreeMap<Long, Integer> at = new java.util.TreeMap<>();
        for (SequenceWatermark m : marks) {
            at.merge(m.get(), 1, Integer::sum);
        }
        System.out.printf(
                "  NOT FINISHED: engines by watermark %s (last seq %d); unapplied bytes %d%n",
                at,
                last,
                io.kvindexer.indexer.ingest.IngestPollers.shared().inflight().used());
    }

    /** Polls the watermarks every millisecond until all are at {@code seq}; how many got there. */
    private static int awaitAll(SequenceWatermark[] marks, long seq, long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        int done = 0;
        for (int from = 0; from < marks.length && System.nanoTime() < deadline; ) {
            if (marks[from].get() >= seq) {
                from++;
                done = from;
            } else {
                Thread.sleep(1);
            }
        }
        return done;
    }

    /** Per batch {@code [engine * perEngine + k]}: when handed to the index and when applied (nanoTime; 0 until then). */
    record Stamps(AtomicLongArray handed, AtomicLongArray applied) {}

    /**
     * Has every engine's watermark stamp, on the writer thread, when the index applied each of its batches
     * {@code first .. first + perEngine - 1}, and when it was handed over. Nothing observes the index from outside: no
     * barrier on the writer's queue, no thread polling watermarks.
     */
    private static Stamps stampApplies(SequenceWatermark[] marks, int first, int perEngine) {
        Stamps stamps = new Stamps(
                new AtomicLongArray(marks.length * perEngine), new AtomicLongArray(marks.length * perEngine));
        for (int i = 0; i < marks.length; i++) {
            int base = i * perEngine;
            marks[i].onApplied((seq, handedNanos, nanos) -> {
                long k = seq - first;
                if (k >= 0 && k < perEngine) {
                    stamps.handed().set(base + (int) k, handedNanos);
                    stamps.applied().set(base + (int) k, nanos);
                }
            });
        }
        return stamps;
    }

    /**
     * The lags of a paced run, once every batch is applied: each batch's send (as its publisher stamped it right after
     * its send call) → its apply (as the writer stamped it, {@link #stampApplies}). A publisher that falls behind its
     * schedule (the fleet's single Python thread, driving 1,024 libzmq sockets, sends up to tens of ms late where the
     * single engine's sends a few) is the bench's delay, not the indexer's: the due → applied lag, which counts it, is
     * kept beside it ({@link Result#dueLags}).
     */
    private Result pacedLags(
            FleetPublishers pubs, List<Path> measured, Stamps stamps, int perEngine, double rate, long start)
            throws Exception {
        AtomicLongArray appliedAt = stamps.applied();
        int engines = appliedAt.length() / perEngine;
        long deadline = System.nanoTime() + (long) (blockEvents() / rate * 1e9) + 120_000_000_000L;
        int count = 0;
        for (int j = 0; j < appliedAt.length() && System.nanoTime() < deadline; ) {
            if (appliedAt.get(j) != 0) {
                j++;
                count = j;
            } else {
                Thread.sleep(10);
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        List<String> sent = pubs.answers();
        java.time.Instant now = java.time.Instant.now();
        long nanosAtEpoch = System.nanoTime() - (now.getEpochSecond() * 1_000_000_000L + now.getNano());
        long[] lags = new long[appliedAt.length()];
        long[] dueLags = new long[appliedAt.length()];
        long[] late = new long[appliedAt.length()];
        long[] toWriter = new long[appliedAt.length()];
        long[] inWriter = new long[appliedAt.length()];
        int n = 0;
        for (int p = 0; p < pubs.processes(); p++) {
            long startMs = Long.parseLong(sent.get(p).split(" ")[3]);
            long[] sentAtMicros = readSent(sentFile(measured.get(p)));
            int size = pubs.size(p);
            double perSecond = rate * size / engines / (2.0 * half);
            for (int local = 0; local < size; local++) {
                int i = pubs.first(p) + local;
                for (int k = 0; k < perEngine; k++) {
                    long at = appliedAt.get(i * perEngine + k);
                    if (at == 0) {
                        continue;
                    }
                    int m = k * size + local; // this process's message m: k rounds of its engines, then this one
                    long due = startMs * 1_000_000L + nanosAtEpoch + (long) (m * 1e9 / perSecond);
                    long sentAt = sentAtMicros[m] * 1_000L + nanosAtEpoch;
                    long handed = stamps.handed().get(i * perEngine + k);
                    toWriter[n] = Math.max(0, handed - sentAt) / 1_000L;
                    inWriter[n] = Math.max(0, at - handed) / 1_000L;
                    lags[n] = Math.max(0, at - sentAt) / 1_000L;
                    dueLags[n] = Math.max(0, at - due) / 1_000L;
                    late[n++] = Math.max(0, sentAt - due) / 1_000L;
                }
            }
        }
        long[] sorted = sortedPrefix(lags, n);
        long[] sortedLate = sortedPrefix(late, n);
        System.out.printf(
                "  publishers' sends behind schedule p99 / max %d / %d µs%n",
                percentile(sortedLate, 99), n == 0 ? 0 : sortedLate[n - 1]);
        return new Result(
                engines,
                blockEvents() / seconds,
                seconds,
                percentile(sorted, 50),
                percentile(sorted, 99),
                n == 0 ? 0 : sorted[n - 1],
                count,
                0,
                0,
                "",
                sorted,
                sortedPrefix(dueLags, n),
                sortedPrefix(toWriter, n),
                sortedPrefix(inWriter, n),
                null,
                null,
                null,
                0);
    }

    private static long[] sortedPrefix(long[] values, int n) {
        long[] sorted = Arrays.copyOf(values, n);
        Arrays.sort(sorted);
        return sorted;
    }

    /** A publisher's send stamps: one big-endian i64 per message, the epoch microseconds its send call returned. */
    private static long[] readSent(Path file) throws IOException {
        java.nio.LongBuffer longs =
                java.nio.ByteBuffer.wrap(Files.readAllBytes(file)).asLongBuffer();
        long[] micros = new long[longs.remaining()];
        longs.get(micros);
        return micros;
    }

    /**
     * Encodes batches {@code from .. from + n - 1} of every engine, each process's engines round-robin, into a file per
     * process, and has each process load its file (before any clock).
     */
    private List<Path> load(FleetPublishers pubs, List<Path> files, int from, int n, int window) throws IOException {
        List<Path> these = new ArrayList<>();
        EngineSimulator.Options sim = EngineSimulator.Options.defaults();
        EngineEventEncoder encoder = new EngineEventEncoder(sim.format(), sim.hashMode());
        for (int p = 0; p < pubs.processes(); p++) {
            Path file = Files.createTempFile("fleet-batches", ".bin");
            files.add(file);
            files.add(sentFile(file));
            these.add(file);
            try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(file)))) {
                for (int k = from; k < from + n; k++) {
                    for (int local = 0; local < pubs.size(p); local++) {
                        byte[] payload = encoder.encode(1.0, batch(pubs.first(p) + local, k, window), null);
                        out.writeInt(local);
                        out.writeInt(payload.length);
                        out.write(payload);
                    }
                }
            }
            pubs.tell(p, "load " + file);
        }
        pubs.answers();
        return these;
    }

    /** Where a publisher writes when it sent each message of a paced send of {@code loaded}. */
    private static Path sentFile(Path loaded) {
        return Path.of(loaded + ".sent");
    }

    /** Batch {@code k} of {@code engine}: removes what batch {@code k - window} stored, stores {@code half} new blocks. */
    private List<SimEvent> batch(int engine, int k, int window) {
        List<SimEvent> events = new ArrayList<>(2);
        if (k >= window) {
            events.add(EngineSimulator.removed(hashes(engine, k - window), "GPU"));
        }
        long[] hashes = hashes(engine, k);
        int[] tokens = new int[half * blockSize];
        SplittableRandom rng = new SplittableRandom(hashes[0]);
        for (int t = 0; t < tokens.length; t++) {
            tokens[t] = rng.nextInt(150_000); // a vocabulary's worth of token ids
        }
        events.add(EngineSimulator.stored(hashes, null, tokens, blockSize, "GPU", null));
        return events;
    }

    /**
     * The block hashes batch {@code k} of {@code engine} stores: one chain, unique to the engine and batch, and looking
     * random as an engine's hashes do (a bijection of engine, batch and position). Unmixed, the single engine's
     * hashes differed only in their low bits and the fleet's in their high ones, and the index's block-hash table
     * handled the two patterns differently: in process, with no sockets, the same operations cost the writer 12-22 %
     * more per block event for 1,024 workers than for one; mixed, both the same.
     */
    private long[] hashes(int engine, int k) {
        long[] h = new long[half];
        for (int j = 0; j < half; j++) {
            h[j] = HashCommon.murmurHash3(((engine + 1L) << 40) | ((long) k << 12) | j);
        }
        return h;
    }
}
