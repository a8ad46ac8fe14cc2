package io.kvindexer.indexer.bench;

import java.nio.file.Files;
import java.nio.file.Path;

/** Shared by the benchmark smoke tests: the committed trace, found from the module or the repository root. */
final class BenchSmoke {

    private BenchSmoke() {
    }

    static Path trace() {
        for (Path p : new Path[]{Path.of("data/mooncake_conversation_trace.jsonl"),
                Path.of("../data/mooncake_conversation_trace.jsonl")}) {
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        throw new IllegalStateException("data/mooncake_conversation_trace.jsonl not found from " + Path.of("").toAbsolutePath());
    }
}
