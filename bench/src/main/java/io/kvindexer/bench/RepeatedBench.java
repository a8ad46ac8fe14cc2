package io.kvindexer.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Mixin;

/**
 * A benchmark measured over repetitions: its {@code --repetitions}, then a summary of the medians, printed and, with
 * {@code --json}, written to a file with the repetitions themselves.
 *
 * @param <R> one repetition's figures
 */
abstract class RepeatedBench<R> extends BenchCommand {

    @Mixin
    Runs runs = new Runs();

    @Mixin
    JsonFile json = new JsonFile();

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
        BenchJson.report(summary(runBench()), json.path);
        return 0;
    }
}
