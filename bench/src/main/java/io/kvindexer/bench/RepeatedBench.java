package io.kvindexer.bench;

import io.kvindexer.indexer.ConfigException;
import io.kvindexer.indexer.IndexerApp;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What the end-to-end benchmarks (a real indexer fed a trace {@link WorkloadOptions workload}, measured over
 * repetitions) share as commands: the workload and indexer flags, the indexer start, and the run: their repetitions,
 * then a summary of the medians, printed and, with {@code --json}, written to a file.
 *
 * @param <R> one repetition's figures
 */
abstract class RepeatedBench<R> extends BenchCommand {

    @Mixin
    WorkloadOptions workload;

    @Option(names = "--threads", description = "indexer writer threads")
    int threads = 1;

    @Option(names = "--index-shards", description = "shards per index, at most --threads (the indexer's flag)")
    int indexShards = 1;

    @Option(names = "--json", description = "write the results here as JSON")
    Path json;

    RepeatedBench() {
        this(new WorkloadOptions());
    }

    /** @param workload the workload flags with this benchmark's defaults */
    RepeatedBench(WorkloadOptions workload) {
        this.workload = workload;
    }

    /** The indexer under test: a real one on a free port with {@code --threads} writer threads. */
    IndexerApp startIndexer() throws ConfigException {
        return IndexerApp.start(
                "--port", "0", "--threads", Integer.toString(threads), "--index-shards", Integer.toString(indexShards));
    }

    /** The memberships {@code app} holds over all its indexes, once its writers have applied what they were given. */
    static long memberships(IndexerApp app) {
        app.indexers().flushAll().join();
        return app.indexers().all().stream()
                .mapToLong(ix -> ix.stats().memberships())
                .sum();
    }

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
