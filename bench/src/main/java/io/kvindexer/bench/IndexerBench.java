package io.kvindexer.bench;

import io.kvindexer.indexer.ConfigException;
import io.kvindexer.indexer.IndexerApp;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * What the end-to-end benchmarks (a real indexer fed a trace {@link WorkloadOptions workload}, measured over
 * repetitions) share as commands: the workload and indexer flags and the indexer start.
 *
 * @param <R> one repetition's figures
 */
abstract class IndexerBench<R> extends RepeatedBench<R> {

    @Mixin
    WorkloadOptions workload;

    @Option(names = "--threads", description = "indexer writer threads")
    int threads = 1;

    @Option(names = "--index-shards", description = "shards per index, at most --threads (the indexer's flag)")
    int indexShards = 1;

    IndexerBench() {
        this(new WorkloadOptions());
    }

    /** @param workload the workload flags with this benchmark's defaults */
    IndexerBench(WorkloadOptions workload) {
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
}
