package io.kvindexer.bench;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * Untimed warm-up rounds that last until HotSpot's compilers are quiet. The index's write path is large and a fresh
 * index's first stores deoptimise parts of it (root blocks, a table's first growth: branches the steady state never
 * takes), so the compilers keep recompiling it for several rounds; on a small machine they share the cores with the
 * replay's writer and issuer, and a measured repetition that overlaps them measures the compiler (its CPU, and the
 * writer running uncompiled code meanwhile), not the index. The floor's loop compiles within its first round.
 */
final class WarmUp {

    /** a round in which the compilers ran for less than this share of its wall time counts as quiet */
    static final double QUIET_SHARE = 0.05;

    /** One untimed round. */
    @FunctionalInterface
    interface Round {
        void run() throws InterruptedException;
    }

    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean();

    private WarmUp() {}

    /**
     * Runs {@code min} rounds, then (when {@code min > 0}) more while the last one was not quiet, at most {@code max}
     * in all (a {@code max} below {@code min} adds none); returns how many it ran.
     */
    static int run(int min, int max, Round round) throws InterruptedException {
        int rounds = 0;
        boolean quiet = !timed();
        while (rounds < min || (min > 0 && !quiet && rounds < max)) {
            long compiling = compileMillis();
            long start = System.nanoTime();
            round.run();
            rounds++;
            quiet = compileMillis() - compiling < QUIET_SHARE * (System.nanoTime() - start) / 1e6;
        }
        return rounds;
    }

    /** The compilers' accumulated time so far, in ms (0 where the JVM does not measure it). */
    static long compileMillis() {
        return timed() ? JIT.getTotalCompilationTime() : 0;
    }

    private static boolean timed() {
        return JIT != null && JIT.isCompilationTimeMonitoringSupported();
    }
}
