package io.kvindexer.bench;

import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.ArrayList;
import java.util.List;

/**
 * Lookup latency against the number of workers holding the prefix: the same trace partitioned over each worker
 * count in turn (Dynamo's {@code --num-unique-inference-workers}), replayed at one window, with the per-query probe
 * floor ({@link ProbeFloor}) measured in the same run, warm (back to back) and paced (a second replay that times the
 * floor at each query's deadline instead of the lookup). Medians of the repetitions.
 */
public final class WorkerSweep {

    /**
     * One worker count: lookup percentiles at that window, the probe floor's medians (warm, and paced: the answer
     * floor timed at the lookups' deadlines beside the writer, {@link Replay#runFloor}), and whether the replay kept
     * up (finished within 1.10 × the window; the latencies are "at keep-up" only then), the index's memberships
     * at the end and its heap per membership (measured on the first repetition, see {@link Replay.Result}), the
     * untimed runs before it ({@link WarmUp}) and the JIT compilers' time during its measured ones. Written
     * as is into the {@code sweep} of {@link TraceBench}'s JSON, its names in snake case.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Point(
            int workers,
            double lookupP50Us,
            double lookupP99Us,
            double probeFloorP50Us,
            double probeFloorP99Us,
            double answerFloorP50Us,
            double pacedFloorP50Us,
            double pacedFloorP99Us,
            double idleLookupP50Us,
            boolean keptUp,
            long memberships,
            double bytesPerMembership,
            double windowMs,
            int warmupRuns,
            long jitCompilingMsMeasured) {
        public double overFloor() {
            return lookupP50Us / probeFloorP50Us;
        }

        /** The lookup's p50 over the answer floor's (issue 19's goal: at most 2). */
        public double overAnswerFloor() {
            return lookupP50Us / answerFloorP50Us;
        }

        /** The lookup's p50 over the paced answer floor's: both timed at the same deadlines beside the writer. */
        public double overPacedFloor() {
            return lookupP50Us / pacedFloorP50Us;
        }

        /** The idle lookup's p50 over the answer floor's: both back to back on a warm thread, nothing else running. */
        public double idleOverAnswerFloor() {
            return idleLookupP50Us / answerFloorP50Us;
        }
    }

    private WorkerSweep() {}

    public static List<Point> run(
            MooncakeTrace trace,
            Workload.Spec base,
            List<Integer> workerCounts,
            double windowMs,
            int threads,
            int issuers,
            boolean prehashed,
            int repetitions,
            int warmup,
            int warmupMax)
            throws InterruptedException {
        List<Point> out = new ArrayList<>();
        for (int workers : workerCounts) {
            Workload workload = Workload.build(
                    trace,
                    new Workload.Spec(
                            base.traceBlockSize(), base.blockSize(), workers, base.engineBlocks(), base.seed()));
            workload.localHashes(); // outside any timing
            ProbeFloor probeFloor = new ProbeFloor(workload);
            // each worker count's fresh indexes take new branches (see WarmUp): compiled before its lookups are timed
            int warmupRuns = WarmUp.run(
                    warmup, warmupMax, () -> Replay.run(workload, windowMs, threads, issuers, false, prehashed));
            long compiledBefore = WarmUp.compileMillis();
            List<Point> reps = new ArrayList<>();
            for (int r = 0; r < repetitions; r++) {
                Replay.Result run = Replay.run(workload, windowMs, threads, issuers, r == 0, prehashed);
                Latencies floor = probeFloor.run(null);
                Latencies answerFloor = probeFloor.run(run.named());
                Latencies paced = Replay.runFloor(
                                workload, windowMs, threads, issuers, prehashed, probeFloor, run.named())
                        .lookup();
                reps.add(new Point(
                        workers,
                        run.lookup().percentileMicros(50),
                        run.lookup().percentileMicros(99),
                        floor.percentileMicros(50),
                        floor.percentileMicros(99),
                        answerFloor.percentileMicros(50),
                        paced.percentileMicros(50),
                        paced.percentileMicros(99),
                        run.idleLookup().percentileMicros(50),
                        run.elapsedNanos() <= 1.10 * windowMs * 1e6,
                        run.memberships(),
                        r == 0 ? (double) run.heapBytes() / run.memberships() : Double.NaN,
                        windowMs,
                        warmupRuns,
                        0));
            }
            long compiling = WarmUp.compileMillis() - compiledBefore;
            long keptUp = reps.stream().filter(Point::keptUp).count();
            Point p = new Point(
                    workers,
                    Medians.of(reps, Point::lookupP50Us),
                    Medians.of(reps, Point::lookupP99Us),
                    Medians.of(reps, Point::probeFloorP50Us),
                    Medians.of(reps, Point::probeFloorP99Us),
                    Medians.of(reps, Point::answerFloorP50Us),
                    Medians.of(reps, Point::pacedFloorP50Us),
                    Medians.of(reps, Point::pacedFloorP99Us),
                    Medians.of(reps, Point::idleLookupP50Us),
                    keptUp * 2 > repetitions,
                    reps.get(reps.size() - 1).memberships(),
                    reps.get(0).bytesPerMembership(),
                    windowMs,
                    warmupRuns,
                    compiling);
            System.out.printf(
                    "workers %5d: lookup p50/p99 %.2f/%.2f us, probe floor p50/p99 %.2f/%.2f us (p50 x%.1f), answer floor p50 %.2f us (x%.2f), "
                            + "paced answer floor p50/p99 %.2f/%.2f us (x%.2f), idle lookup p50 %.2f us (x%.2f of the answer floor)%s, "
                            + "%d memberships, %.1f B/membership; %d untimed runs, then JIT %d ms in the measured%n",
                    workers,
                    p.lookupP50Us(),
                    p.lookupP99Us(),
                    p.probeFloorP50Us(),
                    p.probeFloorP99Us(),
                    p.overFloor(),
                    p.answerFloorP50Us(),
                    p.overAnswerFloor(),
                    p.pacedFloorP50Us(),
                    p.pacedFloorP99Us(),
                    p.overPacedFloor(),
                    p.idleLookupP50Us(),
                    p.idleOverAnswerFloor(),
                    p.keptUp() ? "" : " (behind: not at keep-up)",
                    p.memberships(),
                    p.bytesPerMembership(),
                    p.warmupRuns(),
                    p.jitCompilingMsMeasured());
            out.add(p);
        }
        return out;
    }
}
