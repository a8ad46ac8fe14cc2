package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/bench names the benchmarks it can run (the bench module's main classes) when given none, {@code --help} or a
 * name that is not one, instead of the JVM's ClassNotFoundException. It runs on a copy of the repository's layout
 * with a fake JDK and a fake Maven that write down how they were called.
 */
class BenchScriptTest {

    private static final String BENCH = "bench/src/main/java/io/kvindexer/bench/";

    @TempDir
    Path tmp;

    private ScriptSandbox sandbox;

    @BeforeEach
    void layout() throws IOException {
        sandbox = ScriptSandbox.of(tmp, "bin/bench", "bin/find-jdk");
        write(BENCH + "TraceBench.java", "class TraceBench { public static void main(String[] a) {} }");
        write(BENCH + "FleetBench.java", "class FleetBench { public static void main(String[] a) {} }");
        write(BENCH + "ZmtpFleetMain.java", "class ZmtpFleetMain { public static void main(String[] a) {} }");
        write(BENCH + "Latencies.java", "class Latencies {}");
        Path jar = write("bench/target/kv-indexer-bench.jar", "");
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().plusSeconds(3600)));
    }

    @Test
    void noNameListsTheBenchmarksAndFails() throws Exception {
        ScriptSandbox.Result r = bench();

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("usage: bin/bench NAME [flags]", "NAME: FleetBench TraceBench\n");
        assertThat(r.stdout()).as("nothing is started").isEmpty();
    }

    @Test
    void helpListsTheBenchmarks() throws Exception {
        ScriptSandbox.Result r = bench("--help");

        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).contains("NAME: FleetBench TraceBench\n");
    }

    @Test
    void anUnknownNameIsRefusedWithTheListBeforeAnythingIsBuiltOrStarted() throws Exception {
        for (String name : List.of("NoSuchBench", "Latencies", "../TraceBench", "tracebench")) {
            ScriptSandbox.Result r = bench(name, "--help");

            assertThat(r.exit()).as(name).isEqualTo(2);
            assertThat(r.stderr())
                    .as(name)
                    .contains("kv-indexer: no benchmark named '" + name + "'", "NAME: FleetBench TraceBench")
                    .doesNotContain("mvn");
            assertThat(r.stdout()).as(name).isEmpty();
        }
    }

    @Test
    void aKnownNameRunsItsClassWithTheRestOfTheArguments() throws Exception {
        ScriptSandbox.Result r = bench("TraceBench", "--help");

        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("io.kvindexer.bench.TraceBench --help");
    }

    private ScriptSandbox.Result bench(String... args) throws IOException, InterruptedException {
        return sandbox.run(tmp, "bin/bench", args);
    }

    private Path write(String file, String text) throws IOException {
        Path f = sandbox.repo().resolve(file);
        Files.createDirectories(f.getParent());
        Files.writeString(f, text, StandardCharsets.UTF_8);
        return f;
    }
}
