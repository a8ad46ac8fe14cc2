package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's two commands find a JDK 21+ through bin/find-jdk: JAVA_HOME when it is 21 or newer, else the newest
 * JDK 21+ under /usr/lib/jvm, else a clear message and exit 1. Fake JDKs (scripts answering like `java`) make the
 * test independent of what this machine has installed.
 */
class FindJdkScriptTest {

    @TempDir
    Path tmp;

    /** The folder find-jdk searches when JAVA_HOME is too old ({@code KVI_JVM_DIR}, else /usr/lib/jvm). */
    private Path jvms;

    @BeforeEach
    void jvmFolder() throws IOException {
        jvms = Files.createDirectories(tmp.resolve("jvm"));
    }

    @Test
    void javaHomeOf21OrNewerIsKept() throws Exception {
        Path home = fakeJdk(tmp.resolve("my-jdk-21"), "21");
        jvm("jdk-25", "25");

        assertChooses(findJdk(home), home);
    }

    @Test
    void aJavaHomeOf17FallsBackToTheNewestUnderTheJvmFolder() throws Exception {
        Path old = jvm("java-17", "17");
        jvm("jdk-21", "21");
        Path newest = jvm("temurin-25", "25");
        jvm("java-1.8", "1.8");

        assertChooses(findJdk(old), newest);
    }

    @Test
    void noJdk21AnywhereFailsWithAClearMessage() throws Exception {
        Path old = jvm("java-17", "17");

        Result r = findJdk(old);

        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.stdout()).isEmpty();
        assertThat(r.stderr())
                .contains("no JDK 21 or newer found")
                .contains(jvms.toString())
                .contains("JAVA_HOME");
    }

    @Test
    void onJdk23OrNewerMavenMayUseUnsafeSoItDoesNotWarn() throws Exception {
        Path jdk25 = jvm("temurin-25", "25");
        Path jdk21 = jvm("jdk-21", "21");

        assertThat(run(jdk25, "-Xmx1g", "printf '%s' \"$MAVEN_OPTS\"").stdout())
                .isEqualTo("-Xmx1g --sun-misc-unsafe-memory-access=allow");
        assertThat(run(jdk25, "--sun-misc-unsafe-memory-access=warn", "printf '%s' \"$MAVEN_OPTS\"")
                        .stdout())
                .as("a choice of the user's own is kept")
                .isEqualTo("--sun-misc-unsafe-memory-access=warn");
        assertThat(run(jdk21, null, "printf '%s' \"${MAVEN_OPTS-unset}\"").stdout())
                .as("JDK 21 does not know the flag and would not start")
                .isEqualTo("unset");
    }

    private record Result(int exit, String stdout, String stderr) {}

    private static void assertChooses(Result r, Path jdk) {
        assertThat(r.exit()).isZero();
        assertThat(r.stdout().strip()).isEqualTo(jdk.toString());
    }

    /** Sources bin/find-jdk in a bash that prints the JAVA_HOME it chose. */
    private Result findJdk(Path javaHome) throws IOException, InterruptedException {
        return run(javaHome, null, "printf '%s' \"$JAVA_HOME\"");
    }

    /** Sources bin/find-jdk in a bash with {@code MAVEN_OPTS} set (or unset: null), then runs {@code then}. */
    private Result run(Path javaHome, String mavenOpts, String then) throws IOException, InterruptedException {
        Path script = RepoFiles.root().resolve("bin/find-jdk");
        ProcessBuilder pb = new ProcessBuilder(
                "bash", "-c", "set -euo pipefail; . \"$1\"; " + then, "find-jdk-test", script.toString());
        pb.environment().put("JAVA_HOME", javaHome.toString());
        pb.environment().remove("MAVEN_OPTS");
        if (mavenOpts != null) {
            pb.environment().put("MAVEN_OPTS", mavenOpts);
        }
        pb.environment().put("KVI_JVM_DIR", jvms.toString());
        Path out = tmp.resolve("out.txt");
        Path err = tmp.resolve("err.txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("find-jdk finished").isTrue();
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    /** A fake JDK {@code name} in the JVM folder. */
    private Path jvm(String name, String version) throws IOException {
        return fakeJdk(jvms.resolve(name), version);
    }

    /** A folder with bin/java and bin/javac that report {@code version} the way `java -XshowSettings` does. */
    private static Path fakeJdk(Path home, String version) throws IOException {
        Path bin = Files.createDirectories(home.resolve("bin"));
        String java = "#!/bin/sh\necho '    java.specification.version = " + version + "' >&2\n";
        for (String tool : List.of("java", "javac")) {
            Path f = bin.resolve(tool);
            Files.writeString(f, java, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return home;
    }
}
