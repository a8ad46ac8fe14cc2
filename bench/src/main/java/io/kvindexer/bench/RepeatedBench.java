package io.kvindexer.bench;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * A benchmark measured over repetitions: its {@code --repetitions}, then a summary of the medians, printed and, with
 * {@code --json}, written to a file with the repetitions themselves.
 *
 * @param <R> one repetition's figures
 */
abstract class RepeatedBench<R> extends BenchCommand {

    @Mixin
    Runs runs = new Runs();

    @Option(names = "--json", description = "write the results here as JSON")
    Path json;

    /** Runs the warm-up and the measured repetitions; tests call this directly. */
    public abstract List<R> runBench() throws Exception;

    /** Puts the figures to report into {@code out}, in order: medians over {@code reps} and the configuration. */
    abstract void summarize(List<R> reps, Map<String, Object> out);

    /** The summary as printed and written: the figures {@link #summarize} puts, then the repetitions themselves. */
    final Map<String, Object> summary(List<R> reps) {
        Map<String, Object> out = new LinkedHashMap<>();
        summarize(reps, out);
        out.put("reps", reps);
        return out;
    }

    @Override
    public final Integer call() throws Exception {
        BenchJson.report(summary(runBench()), json);
        return 0;
    }
}
