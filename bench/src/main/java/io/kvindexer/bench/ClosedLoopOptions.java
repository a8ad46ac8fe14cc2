package io.kvindexer.bench;

import picocli.CommandLine.Option;

/**
 * The options of a bench that drives HTTP targets with {@link ClosedLoop} (a picocli mixin; each bench passes its own
 * defaults, which picocli shows as the defaults).
 */
final class ClosedLoopOptions {

    @Option(names = "--clients", description = "concurrent closed-loop HTTP clients (virtual threads)")
    int clients;

    @Option(names = "--seconds", description = "measured seconds per HTTP target (in --slices slices)")
    double seconds;

    @Option(names = "--warmup-seconds", description = "unmeasured seconds before each HTTP target")
    double warmupSeconds;

    @Option(
            names = "--slices",
            description = "each HTTP target's measured seconds are cut into this many slices, run in turn with the"
                    + " other targets' (order rotating), so the ratios compare the same stretches of a shared machine")
    int slices;

    ClosedLoopOptions(int clients, double seconds, double warmupSeconds, int slices) {
        this.clients = clients;
        this.seconds = seconds;
        this.warmupSeconds = warmupSeconds;
        this.slices = slices;
    }

    ClosedLoop loop() {
        return new ClosedLoop(clients, seconds, warmupSeconds);
    }
}
