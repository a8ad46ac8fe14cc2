package io.kvindexer.bench;

import picocli.CommandLine.Option;

/**
 * How long {@link TraceBench} takes to replay the whole trace: one window, or with {@code --sweep} a series of
 * windows from long to short, each one offered rate of the achieved-vs-offered curve.
 */
final class Windows {

    @Option(names = "--window-ms", description = "replay the whole trace in this long")
    double windowMs = 1_000;

    @Option(names = "--sweep", description = "N log-spaced windows from --sweep-max-ms down to --sweep-min-ms (0: off)")
    int sweep = 0;

    @Option(names = "--sweep-min-ms", description = "shortest sweep window")
    double sweepMinMs = 50;

    @Option(names = "--sweep-max-ms", description = "longest sweep window")
    double sweepMaxMs = 20_000;

    /** The windows to replay, in milliseconds, longest first. */
    double[] all() {
        return sweep > 0 ? logSpaced(sweepMaxMs, sweepMinMs, sweep) : new double[] {windowMs};
    }

    /** {@code n} windows from {@code from} to {@code to}, evenly spaced on a log scale. */
    static double[] logSpaced(double from, double to, int n) {
        double[] out = new double[n];
        for (int i = 0; i < n; i++) {
            double t = n == 1 ? 0 : (double) i / (n - 1);
            out[i] = Math.exp(Math.log(from) + t * (Math.log(to) - Math.log(from)));
        }
        return out;
    }
}
