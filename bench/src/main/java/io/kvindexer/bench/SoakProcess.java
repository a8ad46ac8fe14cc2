package io.kvindexer.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An indexer in a process of its own ({@code IndexerMain}, this JVM's class path), so its heap, threads and file
 * descriptors are its own: heap used after a full collection ({@code jcmd GC.run}, then {@code GC.heap_info}),
 * threads and open descriptors from {@code /proc}. Its log goes to a file.
 */
final class SoakProcess implements AutoCloseable {

    private static final Pattern LISTENING = Pattern.compile("kv-indexer listening on (\\S+)");
    private static final Pattern USED = Pattern.compile("used (\\d+)K");

    private final Process process;
    private final String baseUrl;
    private final Path log;

    private SoakProcess(Process process, String baseUrl, Path log) {
        this.process = process;
        this.baseUrl = baseUrl;
        this.log = log;
    }

    /** Starts {@code IndexerMain --host 127.0.0.1 --port 0 <flags>} with {@code -Xmx<heap>}; waits for its address. */
    static SoakProcess start(String heap, List<String> flags, Path log) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(
                java(),
                "-Xmx" + heap,
                "-cp",
                System.getProperty("java.class.path"),
                "io.kvindexer.indexer.IndexerMain"));
        cmd.addAll(List.of("--host", "127.0.0.1", "--port", "0"));
        cmd.addAll(flags);
        Process p = new ProcessBuilder(cmd).redirectError(log.toFile()).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line;
        while ((line = out.readLine()) != null) {
            Matcher m = LISTENING.matcher(line);
            if (m.find()) {
                Thread drain = new Thread(() -> out.lines().forEach(l -> {}), "soak-indexer-stdout");
                drain.setDaemon(true);
                drain.start();
                return new SoakProcess(p, m.group(1), log);
            }
        }
        p.destroyForcibly();
        throw new IOException("the indexer exited before listening (exit " + waitFor(p) + "); log: " + log + "\n"
                + Files.readString(log));
    }

    String baseUrl() {
        return baseUrl;
    }

    long pid() {
        return process.pid();
    }

    Path log() {
        return log;
    }

    /** Heap bytes in use after two full collections: one jcmd for the three commands (each jcmd is a JVM start). */
    long heapAfterGc() throws IOException, InterruptedException {
        Matcher m = USED.matcher(jcmd("GC.run", "GC.run", "GC.heap_info"));
        if (!m.find()) {
            throw new IOException("no heap figure from jcmd GC.heap_info for " + pid());
        }
        return Long.parseLong(m.group(1)) * 1024;
    }

    int threads() throws IOException {
        for (String l : Files.readAllLines(Path.of("/proc", Long.toString(pid()), "status"))) {
            if (l.startsWith("Threads:")) {
                return Integer.parseInt(l.substring("Threads:".length()).strip());
            }
        }
        throw new IOException("no Threads line in /proc/" + pid() + "/status");
    }

    int openFds() throws IOException {
        try (var fds = Files.list(Path.of("/proc", Long.toString(pid()), "fd"))) {
            return (int) fds.count();
        }
    }

    /** Runs {@code commands} in order in one jcmd ({@code -f}); their output, together. */
    private String jcmd(String... commands) throws IOException, InterruptedException {
        Path file = Files.createTempFile("soak-jcmd", ".txt");
        try {
            Files.write(file, List.of(commands));
            Process p = new ProcessBuilder(
                            Path.of(java()).resolveSibling("jcmd").toString(),
                            Long.toString(pid()),
                            "-f",
                            file.toString())
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IOException("jcmd " + String.join(", ", commands) + " failed: " + out);
            }
            return out;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    private static String java() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    private static int waitFor(Process p) {
        try {
            return p.waitFor(10, TimeUnit.SECONDS) ? p.exitValue() : -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(15, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(15, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
