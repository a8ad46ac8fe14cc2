package io.kvindexer.packaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A copy of some of the repository's scripts in a temporary repository, with a fake JDK 25 and a fake Maven 3.9 that
 * write down how and where they were called ({@code java ARGS in DIR} on standard output, {@code mvn ARGS in DIR} on
 * standard error), so that a script's choices can be checked without a build or a JVM.
 */
final class ScriptSandbox {

    /** What a script run printed, and its exit status. */
    record Result(int exit, String stdout, String stderr) {}

    private final Path tmp;
    private final Path repo;
    private final Path jdk;
    private final Path tools;

    private ScriptSandbox(Path tmp) {
        this.tmp = tmp;
        this.repo = tmp.resolve("repo");
        this.jdk = tmp.resolve("jdk");
        this.tools = tmp.resolve("tools");
    }

    /** A sandbox in {@code tmp} holding copies of {@code scripts} (paths from the repository's root). */
    static ScriptSandbox of(Path tmp, String... scripts) throws IOException {
        ScriptSandbox s = new ScriptSandbox(tmp);
        for (String script : scripts) {
            Path copy = s.repo.resolve(script);
            Files.createDirectories(copy.getParent());
            Files.copy(RepoFiles.root().resolve(script), copy);
        }
        // answers find-jdk's version question as a JDK 25, otherwise says how and where it was started
        String java = "#!/bin/sh\ncase \"$*\" in *-XshowSettings*) echo '    java.specification.version = 25' >&2 ;;"
                + " *) echo \"java $* in $(pwd)\" ;; esac\n";
        executable(s.jdk.resolve("bin/java"), java);
        executable(s.jdk.resolve("bin/javac"), java);
        executable(
                s.tools.resolve("mvn"),
                "#!/bin/sh\ncase \"$*\" in *-v*) echo 'Apache Maven 3.9.9' ;; *) echo \"mvn $* in $(pwd)\" >&2 ;; esac\n");
        return s;
    }

    /** The sandbox's repository root. */
    Path repo() {
        return repo;
    }

    /** Runs {@code script} of the sandbox's repository with {@code args} in {@code workingDir}, within 60 s. */
    Result run(Path workingDir, String script, String... args) throws IOException, InterruptedException {
        List<String> command =
                new ArrayList<>(List.of("bash", repo.resolve(script).toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(workingDir.toFile());
        pb.environment().put("JAVA_HOME", jdk.toString());
        pb.environment().put("KVI_JVM_DIR", tmp.resolve("no-jvms").toString());
        pb.environment().put("PATH", tools + ":/usr/bin:/bin");
        pb.environment().remove("KVI_AOT");
        Path out = tmp.resolve("out.txt");
        Path err = tmp.resolve("err.txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(script + " finished").isTrue();
        return new Result(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    private static void executable(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
