package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
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

    private Path repo;
    private Path jdk;
    private Path tools;

    @BeforeEach
    void layout() throws IOException {
        repo = tmp.resolve("repo");
        for (String script : List.of("bin/bench", "bin/find-jdk")) {
            Path copy = repo.resolve(script);
            Files.createDirectories(copy.getParent());
            Files.copy(RepoFiles.root().resolve(script), copy);
        }
        write(BENCH + "TraceBench.java", "class TraceBench { public static void main(String[] a) {} }");
        write(BENCH + "FleetBench.java", "class FleetBench { public static void main(String[] a) {} }");
        write(BENCH + "ZmtpFleetMain.java", "class ZmtpFleetMain { public static void main(String[] a) {} }");
        write(BENCH + "Latencies.java", "class Latencies {}");
        Path jar = write("bench/target/kv-indexer-bench.jar", "");
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().plusSeconds(3600)));
        jdk = tmp.resolve("jdk");
        tools = Files.createDirectories(tmp.resolve("tools"));
        String java = "#!/bin/sh\ncase \"$*\" in *-XshowSettings*) echo '    java.specification.version = 25' >&2 ;;"
                + " *) echo \"java $*\" ;; esac\n";
        executable(jdk.resolve("bin/java"), java);
        executable(jdk.resolve("bin/javac"), java);
        executable(
                tools.resolve("mvn"),
                "#!/bin/sh\ncase \"$*\" in *-v*) echo 'Apache Maven 3.9.9' ;; *) echo \"mvn $*\" >&2 ;; esac\n");
    }

    @Test
    void noNameListsTheBenchmarksAndFails() throws Exception {
        Result r = bench();

        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("usage: bin/bench NAME [flags]", "NAME: FleetBench TraceBench\n");
        assertThat(r.stdout()).as("nothing is started").isEmpty();
    }

    @Test
    void helpListsTheBenchmarks() throws Exception {
        Result r = bench("--help");

        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).contains("NAME: FleetBench TraceBench\n");
    }

    @Test
    void anUnknownNameIsRefusedWithTheListBeforeAnythingIsBuiltOrStarted() throws Exception {
        for (String name : List.of("NoSuchBench", "Latencies", "../TraceBench", "tracebench")) {
            Result r = bench(name, "--help");

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
        Result r = bench("TraceBench", "--help");

        assertThat(r.exit()).as(r.stderr()).isZero();
        assertThat(r.stdout()).contains("io.kvindexer.bench.TraceBench --help");
    }

    private record Result(int exit, String stdout, String stderr) {}

    private Result bench(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(
                List.of("bash", repo.resolve("bin/bench").toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(tmp.toFile());
        pb.environment().put("JAVA_HOME", jdk.toString());
        pb.environment().put("KVI_JVM_DIR", tmp.resolve("no-jvms").toString());
        pb.environment().put("PATH", tools + ":/usr/bin:/bin");
        Path out = tmp.resolve("out.txt");
        Path err = tmp.resolve("err.txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("bin/bench finished").isTrue();
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    private Path write(String file, String text) throws IOException {
        Path f = repo.resolve(file);
        Files.createDirectories(f.getParent());
        Files.writeString(f, text, StandardCharsets.UTF_8);
        return f;
    }

    private static void executable(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
