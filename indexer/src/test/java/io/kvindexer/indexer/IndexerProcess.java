package io.kvindexer.indexer;

import io.kvindexer.indexer.testkit.Processes;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/** The real {@code main} in a child JVM: its base URL from the "listening on" line, its output kept for asserts. */
public final class IndexerProcess implements AutoCloseable {

    private static final String LISTENING = "kv-indexer listening on ";

    /**
     * JVM flags for a child that lives seconds and carries no load: C1 only, which makes it listen in about 0.7 s
     * instead of 1.2 s (no C2 compiles competing for the machine's 2 cores). Load tests (kills under load, fault
     * runs) choose their own.
     */
    public static final List<String> QUICK_START = List.of("-XX:TieredStopAtLevel=1");

    private final Process process;
    private final String url;
    private final ConcurrentLinkedQueue<String> output;

    private IndexerProcess(Process process, String url, ConcurrentLinkedQueue<String> output) {
        this.process = process;
        this.url = url;
        this.output = output;
    }

    /**
     * {@code java -Xmx256m <jvmArgs> -cp <this class path> IndexerMain <args>}, with the environment of this JVM
     * minus {@code DYN_ROUTER_MIN_INITIAL_WORKERS} (a later {@code -Xmx} in {@code jvmArgs} wins).
     */
    public static ProcessBuilder command(List<String> jvmArgs, String... args) {
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(javaBin, "-Xmx256m"));
        cmd.addAll(jvmArgs);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), IndexerMain.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().remove("DYN_ROUTER_MIN_INITIAL_WORKERS");
        return pb;
    }

    /**
     * A replica on loopback, any port, writing snapshots into {@code dir} once an hour (and on registration changes),
     * with {@code more} flags after those; a {@link #QUICK_START} JVM.
     */
    public static IndexerProcess snapshotting(Path dir, String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--port", "0", "--host", "127.0.0.1", "--snapshot-dir", dir.toString(), "--snapshot-interval", "1h"));
        args.addAll(List.of(more));
        return start(QUICK_START, args.toArray(String[]::new));
    }

    /** Starts {@link #command} with stderr merged into stdout and waits for it to listen. */
    public static IndexerProcess start(List<String> jvmArgs, String... args) throws Exception {
        return start(Map.of(), jvmArgs, args);
    }

    /** {@link #start(List, String...)} with {@code env} added to the child's environment. */
    public static IndexerProcess start(Map<String, String> env, List<String> jvmArgs, String... args) throws Exception {
        ProcessBuilder pb = command(jvmArgs, args).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        ConcurrentLinkedQueue<String> output = new ConcurrentLinkedQueue<>();
        CompletableFuture<String> url = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("child-indexer-out").start(() -> {
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = out.readLine()) != null; ) {
                    output.add(line);
                    int at = line.indexOf(LISTENING); // a line of its own, or a JSON log record's message
                    if (at >= 0) {
                        url.complete(line.substring(at + LISTENING.length()).split("[\\s\"]", 2)[0]);
                    }
                }
            } catch (Exception ignored) {
                // the process ended
            }
            url.complete(null);
        });
        String u = url.get(120, TimeUnit.SECONDS);
        if (u == null) {
            p.destroyForcibly();
            throw new AssertionError("the child indexer did not start: " + String.join("\n", output));
        }
        return new IndexerProcess(p, u, output);
    }

    public String url() {
        return url;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Everything it printed so far (stdout and stderr, log lines included). */
    public String output() {
        return String.join("\n", output);
    }

    /** SIGKILL on Linux, as a crash would; true when the process ended within a minute. */
    public boolean kill() throws InterruptedException {
        process.destroyForcibly();
        return process.waitFor(60, TimeUnit.SECONDS);
    }

    /**
     * SIGTERM through the process handle, which, unlike {@link Process#destroy}, leaves its output open to read what
     * the shutdown prints; true when it ended within a minute.
     */
    public boolean terminate() throws InterruptedException {
        process.toHandle().destroy();
        return process.waitFor(60, TimeUnit.SECONDS);
    }

    /** SIGTERM, then SIGKILL after 30 s; an interrupted wait kills at once and keeps the interrupt. */
    @Override
    public void close() {
        Processes.stop(process);
    }
}
