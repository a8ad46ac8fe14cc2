package io.kvindexer.bench;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.recovery.PeerRecovery;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Peer recovery: a source indexer is filled over ZeroMQ from the trace (about 1 M memberships with the defaults),
 * then a fresh replica (a real {@link IndexerApp}, started without peers) runs {@link PeerRecovery} against it with
 * the recovery delay at zero; the time from the first request until every membership is applied and flushed is the
 * recovery time. {@code --format} picks what the replica asks for: the binary dump (default) or Dynamo's JSON. The
 * fetch of that dump alone is timed too, to split transfer from apply.
 *
 * <p>By default the replica runs in this JVM beside the source, so its code warms over the repetitions. A restarted
 * replica is a fresh JVM recovering from a long-running source: {@code --fresh-replica} starts each repetition's
 * replica in a process of its own, after the source has served {@code --source-warm-dumps} dumps.
 */
@Command(name = "recovery-bench", description = "Time for a fresh replica to fetch and apply a peer's dump.")
public final class RecoveryBench extends IndexerBench<RecoveryBench.Rep> {

    @Option(names = "--format", description = "dump format the replica asks for: binary or json")
    String format = "binary";

    @Option(
            names = "--fresh-replica",
            description = "each repetition's replica in a JVM of its own, as a restarted replica is (default: in this"
                    + " JVM, beside the source, so it warms over the repetitions)")
    boolean freshReplica;

    @Option(
            names = "--source-warm-dumps",
            description = "with --fresh-replica: dumps the source serves first, as a long-running source is warm")
    int sourceWarmDumps = 5;

    @Option(
            names = "--replica-jvm-opts",
            description = "with --fresh-replica: JVM options added to the replica's (after this JVM's own, without its"
                    + " flight recording and logging)")
    String replicaJvmOpts = "";

    @Option(
            names = "--replica-jar",
            description = "with --fresh-replica: the product jar put first on the replica's class path, as the service"
                    + " launches it (an AOT cache trained with `java -jar` on that jar then applies)")
    String replicaJar;

    /**
     * One recovery: memberships copied, seconds, the dump fetch alone, and the JIT compilers' time meanwhile (in the
     * replica's JVM; with the replica in this one, the source's compilations too).
     */
    public record Rep(
            long memberships,
            double recoverySeconds,
            double membershipsPerSecond,
            double dumpFetchSeconds,
            long dumpBytes,
            double compilerSeconds) {}

    /** A recovery's seconds and the JIT compilers' seconds meanwhile. */
    record Timed(double seconds, double compilerSeconds) {}

    public RecoveryBench() {
        super(WorkloadOptions.sized(16, 65_536));
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new RecoveryBench()).execute(args));
    }

    @Override
    void summarize(List<Rep> reps, Map<String, Object> out) {
        out.put("format", format);
        out.put("memberships", reps.get(0).memberships());
        out.put("recovery_s", Medians.of(reps, Rep::recoverySeconds));
        out.put("memberships_per_s", Medians.of(reps, Rep::membershipsPerSecond));
        out.put("dump_fetch_s", Medians.of(reps, Rep::dumpFetchSeconds));
        out.put("compiler_s", Medians.of(reps, Rep::compilerSeconds));
        out.put("fresh_replica", freshReplica);
        out.put("dump_bytes", reps.get(0).dumpBytes());
    }

    @Override
    public List<Rep> runBench() throws Exception {
        PeerRecovery.Format dumpFormat = switch (format) {
            case "binary" -> PeerRecovery.Format.BINARY;
            case "json" -> PeerRecovery.Format.JSON;
            default ->
                throw new CommandLine.ParameterException(
                        new CommandLine(this), "--format must be binary or json, got " + format);
        };
        Workload w = workload.build();
        try (IndexerApp source = startIndexer();
                SimFleet fleet = new SimFleet(w, new BenchHttp(source.baseUrl()))) {
            BenchHttp http = new BenchHttp(source.baseUrl());
            fleet.fill(http);
            long expected = memberships(source);
            System.out.printf(
                    "source holds %d memberships (the simulated engines: %d + markers)%n",
                    expected, w.expectedMemberships());
            for (int i = 0; i < (freshReplica ? sourceWarmDumps : 0); i++) {
                fetchDump(http, source.baseUrl(), dumpFormat, "?registrations=true");
            }
            List<Rep> reps = new ArrayList<>();
            for (int r = 0; r < runs.repetitions; r++) {
                long f0 = System.nanoTime();
                long dumpBytes = fetchDump(http, source.baseUrl(), dumpFormat, "");
                double fetch = (System.nanoTime() - f0) / 1e9;
                Timed timed = freshReplica
                        ? recoverInOwnProcess(source.baseUrl(), expected)
                        : recover(source.baseUrl(), dumpFormat, expected, Duration.ZERO);
                double seconds = timed.seconds();
                Rep rep = new Rep(expected, seconds, expected / seconds, fetch, dumpBytes, timed.compilerSeconds());
                System.out.printf(
                        "rep %d (%s%s): %d memberships recovered in %.3f s (%.2f M/s); /dump fetch "
                                + "alone %.3f s, %.1f MB; JIT compilers %.3f s meanwhile%n",
                        r + 1,
                        format,
                        freshReplica ? ", fresh replica JVM" : "",
                        expected,
                        seconds,
                        rep.membershipsPerSecond() / 1e6,
                        fetch,
                        dumpBytes / 1e6,
                        timed.compilerSeconds());
                reps.add(rep);
            }
            return reps;
        }
    }

    /**
     * Fetches the source's whole dump ({@code query}: "" or "?registrations=true") and counts its bytes as they come,
     * so that the bench does not hold a JSON dump of a million memberships (270 MB) beside the two indexes.
     */
    private static long fetchDump(BenchHttp http, String sourceUrl, PeerRecovery.Format format, String query)
            throws Exception {
        HttpRequest.Builder request =
                HttpRequest.newBuilder(URI.create(sourceUrl + "/dump" + query)).GET();
        if (format == PeerRecovery.Format.BINARY) {
            request.header("Accept", BinaryDump.MEDIA_TYPE);
        }
        try (java.io.InputStream in = http.client()
                .send(request.build(), HttpResponse.BodyHandlers.ofInputStream())
                .body()) {
            return in.transferTo(java.io.OutputStream.nullOutputStream());
        }
    }

    /**
     * A fresh replica (a real {@link IndexerApp} with the service defaults, in this JVM) recovers from {@code
     * sourceUrl} after {@code delay}; returns the seconds from the end of the delay (when the first request goes out,
     * unless setting up the client took longer) until every membership is applied and flushed. Fails unless the
     * replica then holds exactly {@code expected} memberships.
     */
    static Timed recover(String sourceUrl, PeerRecovery.Format format, long expected, Duration delay) throws Exception {
        IndexerConfig config = IndexerConfig.defaults(); // the service default writer threads
        try (IndexerApp replica = IndexerApp.start(config)) {
            PeerRecovery recovery = new PeerRecovery(
                    List.of(sourceUrl), replica.indexers(), delay, Duration.ofSeconds(120), null, format);
            long t0 = System.nanoTime();
            long c0 = WarmUp.compileMillis();
            if (recovery.run() != PeerRecovery.Result.SUCCEEDED) {
                throw new IllegalStateException("recovery from " + sourceUrl + " failed");
            }
            replica.indexers().flushAll().join();
            double seconds = (System.nanoTime() - t0 - delay.toNanos()) / 1e9;
            double compiler = (WarmUp.compileMillis() - c0) / 1e3;
            long got = memberships(replica);
            if (got != expected) {
                throw new IllegalStateException("replica recovered " + got + " memberships, source holds " + expected);
            }
            return new Timed(seconds, compiler);
        }
    }

    /**
     * {@link #recover} in a JVM of its own ({@link FreshReplica}), as a restarted replica is: this JVM's options
     * without its flight recording or logging, then {@code --replica-jvm-opts}.
     */
    private Timed recoverInOwnProcess(String sourceUrl, long expected) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.startsWith("-XX:StartFlightRecording") && !arg.startsWith("-Xlog")) {
                cmd.add(arg);
            }
        }
        cmd.addAll(List.of(replicaJvmOpts.strip().split("\\s+")).stream()
                .filter(o -> !o.isEmpty())
                .toList());
        cmd.addAll(List.of(
                "-cp",
                replicaJar == null
                        ? System.getProperty("java.class.path")
                        : replicaJar + java.io.File.pathSeparator + System.getProperty("java.class.path"),
                FreshReplica.class.getName(),
                sourceUrl,
                format,
                Long.toString(expected)));
        // its output goes to a file, read after the wait: read from a pipe first, a replica that hangs would hang
        // the bench past the wait's bound
        Path log = Files.createTempFile("kv-indexer-fresh-replica", ".log");
        String out;
        try {
            Process p = new ProcessBuilder(cmd)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            boolean exited = p.waitFor(180, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly();
            }
            out = new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
            if (!exited || p.exitValue() != 0) {
                throw new IllegalStateException("the fresh replica failed: " + out);
            }
        } finally {
            Files.deleteIfExists(log);
        }
        Matcher m = FreshReplica.RESULT.matcher(out);
        if (!m.find()) {
            throw new IllegalStateException("no result from the fresh replica: " + out);
        }
        return new Timed(Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)));
    }

    /**
     * The replica of {@code --fresh-replica}: {@link #recover} once, after the service's recovery delay (a restarted
     * replica sets up its HTTP client meanwhile), then its seconds on stdout.
     */
    public static final class FreshReplica {

        static final Pattern RESULT = Pattern.compile("fresh replica recovered in (\\S+) s, JIT compilers (\\S+) s");

        private FreshReplica() {}

        /** @param args the source's base URL, the format (binary or json), the memberships it holds */
        public static void main(String[] args) throws Exception {
            PeerRecovery.Format format = args[1].equals("json") ? PeerRecovery.Format.JSON : PeerRecovery.Format.BINARY;
            Timed timed = recover(args[0], format, Long.parseLong(args[2]), IndexerConfig.DEFAULT_RECOVERY_DELAY);
            System.out.println("fresh replica recovered in " + timed.seconds() + " s, JIT compilers "
                    + timed.compilerSeconds() + " s");
            System.exit(0);
        }
    }
}
