package io.kvindexer.indexer.bench;

import java.nio.file.Files;
import java.nio.file.Path;

/** Shared by the benchmark smoke tests: the committed trace, found from the module or the repository root. */
final class BenchSmoke {

    private BenchSmoke() {}

    static Path trace() {
        return data("mooncake_conversation_trace.jsonl");
    }

    /** A file of the repository's {@code data/} directory. */
    static Path data(String name) {
        for (Path p : new Path[] {Path.of("data", name), Path.of("..", "data", name)}) {
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        throw new IllegalStateException(
                "data/" + name + " not found from " + Path.of("").toAbsolutePath());
    }
}
