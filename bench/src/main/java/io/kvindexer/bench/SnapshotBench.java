package io.kvindexer.bench;

import io.kvindexer.indexer.ConfigException;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.IndexOp;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.snapshot.Snapshotter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Local snapshots (issue 20's figures): a source indexer is filled over ZeroMQ from the trace (about 1 M memberships
 * with the defaults, as {@link RecoveryBench}), then per repetition:
 *
 * <ol>
 *   <li>one snapshot is written ({@link Snapshotter#write}): the cut, the file write with fsync and rename, its bytes;
 *       meanwhile a probe thread writes to the index one op at a time and times each until applied, so the longest
 *       pause a writer sees during the snapshot is measured against the longest in as long a stretch without one;
 *   <li>a fresh replica (a real {@link IndexerApp}, no peer) starts from a copy of that snapshot: start → Ready;
 *   <li>{@code --replay-batches} more batches are published on the engines' streams (one-block stores, spread over
 *       the engines) while no replica that started from the snapshot listens; another fresh replica starts from the
 *       same snapshot: start → Ready, and start → it holds exactly what the source holds (the replays done).
 * </ol>
 */
@Command(name = "snapshot-bench", description = "Snapshot write, writer pause, and restart from a snapshot.")
public final class SnapshotBench extends IndexerBench<SnapshotBench.Rep> {

    @Option(names = "--replay-batches", description = "batches published after the snapshot, replayed on restart")
    int replayBatches = 10_000;

    /** One repetition's figures. */
    public record Rep(
            long memberships,
            long snapshotBytes,
            long mostHeldBytes,
            double cutSeconds,
            double writeSeconds,
            double pauseMaxMs,
            double pauseMaxBaselineMs,
            double readySeconds,
            double readyWithReplaySeconds,
            double caughtUpSeconds) {}

    public SnapshotBench() {
        super(WorkloadOptions.sized(16, 65_536));
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new SnapshotBench()).execute(args));
    }

    @Override
    void summarize(List<Rep> reps, Map<String, Object> out) {
        out.put("memberships", reps.getFirst().memberships());
        out.put("snapshot_bytes", Medians.of(reps, Rep::snapshotBytes));
        out.put("held_bytes_max", Medians.of(reps, Rep::mostHeldBytes));
        out.put("cut_s", Medians.of(reps, Rep::cutSeconds));
        out.put("write_s", Medians.of(reps, Rep::writeSeconds));
        out.put("writer_pause_max_ms", Medians.of(reps, Rep::pauseMaxMs));
        out.put("writer_pause_max_baseline_ms", Medians.of(reps, Rep::pauseMaxBaselineMs));
        out.put("restart_to_ready_s", Medians.of(reps, Rep::readySeconds));
        out.put("replay_batches", replayBatches);
        out.put("restart_to_ready_with_replay_s", Medians.of(reps, Rep::readyWithReplaySeconds));
        out.put("restart_to_caught_up_s", Medians.of(reps, Rep::caughtUpSeconds));
    }

    @Override
    public List<Rep> runBench() throws Exception {
        Path root = Files.createTempDirectory("snapshot-bench");
        Workload w = workload.build();
        try (IndexerApp source = startWithSnapshots(root.resolve("source"));
                SimFleet fleet = new SimFleet(w, new BenchHttp(source.baseUrl()))) {
            BenchHttp http = new BenchHttp(source.baseUrl());
            fleet.fill(http);
            System.out.printf("source holds %d memberships%n", memberships(source));
            List<Rep> reps = new ArrayList<>();
            for (int r = 0; r < runs.repetitions; r++) {
                ModelIndex probed = source.indexers().all().getFirst();
                Snapshotter.Written[] written = new Snapshotter.Written[1];
                long snapshotStart = System.nanoTime();
                double pause =
                        maxPause(probed, () -> written[0] = source.snapshots().write());
                // the floor: the longest pause in a stretch as long as the snapshot took, without one
                long stretchMs = Math.max(1, (System.nanoTime() - snapshotStart) / 1_000_000);
                double baseline = maxPause(probed, () -> sleep(stretchMs));
                probed.removeWorker(PROBE).join(); // the probe's block is in no comparison
                Snapshotter.Written s = written[0];
                long memberships = memberships(source);

                double ready = restart(copy(s.file(), root.resolve("r" + r + "a")), null);
                for (int i = 0; i < replayBatches; i++) {
                    fleet.publishMarker(i % fleet.workers());
                }
                fleet.awaitAllApplied(http);
                double[] withReplay = new double[2];
                withReplay[0] = restart(copy(s.file(), root.resolve("r" + r + "b")), replica -> {
                    replica.indexers().all().forEach(ix -> ix.removeWorker(PROBE)); // if the cut caught it
                    // one live batch per engine once every listener is connected: a listener that does not ask
                    // for what it missed as it connects sees the gap on it; one that does is replaying already
                    while (!replica.workers().list(null, null).stream()
                            .allMatch(v -> v.listeners().values().stream().allMatch(l -> l.connected()))) {
                        Thread.sleep(1);
                    }
                    Thread.sleep(50); // the subscription travels to the publisher after the handshake
                    for (int worker = 0; worker < fleet.workers(); worker++) {
                        fleet.publishMarker(worker);
                    }
                    fleet.awaitAllApplied(http);
                    long target = memberships(source);
                    long t0 = System.nanoTime();
                    while (memberships(replica) != target) {
                        if (System.nanoTime() - t0 > 120_000_000_000L) {
                            throw new IllegalStateException("the replica holds " + memberships(replica)
                                    + " memberships after 2 min, the source " + target + "; its replays: "
                                    + replays(replica));
                        }
                        Thread.sleep(5);
                    }
                    return System.nanoTime();
                });
                withReplay[1] = lastCaughtUp;
                Rep rep = new Rep(
                        memberships,
                        s.bytes(),
                        s.mostHeldBytes(),
                        s.cutSeconds(),
                        s.writeSeconds(),
                        pause,
                        baseline,
                        ready,
                        withReplay[0],
                        withReplay[1]);
                System.out.printf(
                        "rep %d: %d memberships, snapshot %.1f MB (at most %.2f MB of it in memory; cut %.3f s, forced and"
                                + " renamed %.3f s), longest writer pause"
                                + " %.1f ms (%.1f ms without a snapshot); restart to Ready %.3f s; with %d batches to"
                                + " replay: Ready %.3f s, caught up %.3f s%n",
                        r + 1,
                        memberships,
                        s.bytes() / 1e6,
                        s.mostHeldBytes() / 1e6,
                        s.cutSeconds(),
                        s.writeSeconds(),
                        pause,
                        baseline,
                        ready,
                        replayBatches,
                        withReplay[0],
                        withReplay[1]);
                reps.add(rep);
            }
            return reps;
        }
    }

    /** What a restarted replica does after Ready; returns the nanoTime it finished. */
    @FunctionalInterface
    private interface AfterReady {
        long run(IndexerApp replica) throws Exception;
    }

    private static final WorkerKey PROBE = new WorkerKey(Long.MAX_VALUE, 0);

    private double lastCaughtUp;

    /** A real indexer with {@code --threads} writers keeping its snapshots in {@code dir} (hourly: the bench cuts). */
    private IndexerApp startWithSnapshots(Path dir) throws ConfigException {
        return IndexerApp.start(
                "--port",
                "0",
                "--threads",
                Integer.toString(threads),
                "--snapshot-dir",
                dir.toString(),
                "--snapshot-interval",
                "1h");
    }

    /** Starts a replica from {@code dir}; returns start → Ready in seconds (and keeps start → {@code after}). */
    private double restart(Path dir, AfterReady after) throws Exception {
        long t0 = System.nanoTime();
        try (IndexerApp replica = startWithSnapshots(dir)) {
            while (!replica.gate().isOpen()) {
                Thread.sleep(1);
            }
            double ready = (System.nanoTime() - t0) / 1e9;
            if (after != null) {
                lastCaughtUp = (after.run(replica) - t0) / 1e9;
            }
            return ready;
        }
    }

    private static Path copy(Path snapshot, Path dir) throws Exception {
        Files.createDirectories(dir);
        return Files.copy(snapshot, dir.resolve(snapshot.getFileName())).getParent();
    }

    @FunctionalInterface
    private interface Action {
        void run() throws Exception;
    }

    /**
     * Runs {@code action} while a probe writes to {@code index} (a block stored and removed again, one op at a time,
     * each waited for): the longest time one probe op took to be applied, in ms.
     */
    private static double maxPause(ModelIndex index, Action action) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong longest = new AtomicLong();
        Thread t = Thread.ofPlatform().name("writer-probe").start(() -> {
            boolean store = true;
            while (!stop.get()) {
                IndexOp op = store
                        ? IndexOp.Store.recovered(StorageTier.DEVICE, false, 0, new long[] {-42}, new long[] {-42})
                        : new IndexOp.Remove(StorageTier.DEVICE, new long[] {-42});
                store = !store;
                long t0 = System.nanoTime();
                index.submitOps(PROBE, List.of(op));
                index.flush().join();
                longest.accumulateAndGet(System.nanoTime() - t0, Math::max);
                sleep(1);
            }
        });
        try {
            action.run();
        } finally {
            stop.set(true);
            t.join();
        }
        return longest.get() / 1e6;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The replica's replay and gap counters, as {@code /metrics} shows them. */
    private static List<String> replays(IndexerApp app) throws Exception {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        app.metrics().write("text/plain", out);
        return out.toString(java.nio.charset.StandardCharsets.UTF_8)
                .lines()
                .filter(l -> !l.startsWith("#") && (l.contains("replay") || l.contains("gap") || l.contains("lost")))
                .toList();
    }
}
