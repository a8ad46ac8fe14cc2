package io.kvindexer.packaging;

import io.kvindexer.indexer.testkit.Executables;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Prometheus's own checker, {@code promtool} (Debian's prometheus package; bin/run-tests installs it): the real
 * parser of the exposition format and the real rule engine, where a hand-written check would only guess.
 */
final class Promtool {

    /** What one run printed (standard output and error together) and its exit status. */
    record Result(int exit, String output) {}

    private Promtool() {}

    /** Runs {@code promtool args} in {@code dir} with {@code input} on its standard input. */
    static Result run(Path dir, String input, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(executable()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        p.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        p.getOutputStream().close();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("promtool " + String.join(" ", args) + " did not end within 120 s");
        }
        return new Result(p.exitValue(), output);
    }

    private static String executable() {
        return Executables.onPath("promtool")
                .or(() -> Optional.of(Path.of("/usr/bin/promtool")).filter(Files::isExecutable))
                .orElseThrow(() -> new AssertionError("these tests need Prometheus's promtool on PATH: apt-get"
                        + " install --no-install-recommends prometheus (bin/run-tests does it when it runs as root)"))
                .toString();
    }
}
