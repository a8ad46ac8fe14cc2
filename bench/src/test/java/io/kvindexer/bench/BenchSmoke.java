package io.kvindexer.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import picocli.CommandLine;

/** Shared by the benchmark smoke tests: the committed trace, found from the module or the repository root. */
final class BenchSmoke {

    private BenchSmoke() {}

    static Path trace() {
        return data("mooncake_conversation_trace.jsonl");
    }

    /**
     * The flags of one repetition over a small slice of the committed trace: its first {@code requests} requests on
     * {@code workers} simulated engines of {@code engineBlocks} blocks each, then the benchmark's own {@code more}.
     */
    static String[] oneRun(int requests, int workers, int engineBlocks, String... more) {
        String[] slice = {
            "--trace",
            trace().toString(),
            "--requests",
            Integer.toString(requests),
            "--workers",
            Integer.toString(workers),
            "--engine-blocks",
            Integer.toString(engineBlocks),
            "--repetitions",
            "1"
        };
        return concat(slice, more);
    }

    /** Runs {@code bench} with {@code args} and {@code --json} into {@code dir}; it must exit 0. Its JSON summary. */
    static JsonNode runForJson(Object bench, Path dir, String... args) throws IOException {
        Path json = dir.resolve("summary.json");
        int exit = new CommandLine(bench).execute(concat(args, "--json", json.toString()));
        assertThat(exit).as("exit status").isZero();
        return new ObjectMapper().readTree(Files.readString(json));
    }

    /** {@code args} followed by {@code more}. */
    static String[] concat(String[] args, String... more) {
        String[] out = Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, out, args.length, more.length);
        return out;
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
