package io.kvindexer.bench;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.recovery.PeerRecovery;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Peer recovery: a source indexer is filled over ZeroMQ from the trace (about 1 M memberships with the defaults),
 * then a fresh replica (a real {@link IndexerApp}, started without peers) runs {@link PeerRecovery} against it with
 * the recovery delay at zero; the time from the first request until every membership is applied and flushed is the
 * recovery time. {@code --format} picks what the replica asks for: the binary dump (default) or Dynamo's JSON. The
 * fetch of that dump alone is timed too, to split transfer from apply.
 */
@Command(name = "recovery-bench", description = "Time for a fresh replica to fetch and apply a peer's dump.")
public final class RecoveryBench extends IndexerBench<RecoveryBench.Rep> {

    @Option(names = "--format", description = "dump format the replica asks for: binary or json")
    String format = "binary";

    /** One recovery: memberships copied, seconds, and the dump fetch alone. */
    public record Rep(
            long memberships,
            double recoverySeconds,
            double membershipsPerSecond,
            double dumpFetchSeconds,
            long dumpBytes) {}

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
            List<Rep> reps = new ArrayList<>();
            for (int r = 0; r < runs.repetitions; r++) {
                HttpRequest.Builder fetchRequest = HttpRequest.newBuilder(URI.create(source.baseUrl() + "/dump"))
                        .GET();
                if (dumpFormat == PeerRecovery.Format.BINARY) {
                    fetchRequest.header("Accept", BinaryDump.MEDIA_TYPE);
                }
                long f0 = System.nanoTime();
                HttpResponse<byte[]> dump =
                        http.client().send(fetchRequest.build(), HttpResponse.BodyHandlers.ofByteArray());
                double fetch = (System.nanoTime() - f0) / 1e9;
                IndexerConfig config = IndexerConfig.defaults(); // the service default writer threads
                try (IndexerApp replica = IndexerApp.start(config)) {
                    PeerRecovery recovery = new PeerRecovery(
                            List.of(source.baseUrl()),
                            replica.indexers(),
                            Duration.ZERO,
                            Duration.ofSeconds(120),
                            null,
                            dumpFormat);
                    long t0 = System.nanoTime();
                    if (recovery.run() != PeerRecovery.Result.SUCCEEDED) {
                        throw new IllegalStateException("recovery from " + source.baseUrl() + " failed");
                    }
                    replica.indexers().flushAll().join();
                    double seconds = (System.nanoTime() - t0) / 1e9;
                    long got = memberships(replica);
                    if (got != expected) {
                        throw new IllegalStateException(
                                "replica recovered " + got + " memberships, source holds " + expected);
                    }
                    Rep rep = new Rep(got, seconds, got / seconds, fetch, dump.body().length);
                    System.out.printf(
                            "rep %d (%s): %d memberships recovered in %.3f s (%.2f M/s); /dump fetch "
                                    + "alone %.3f s, %.1f MB%n",
                            r + 1,
                            format,
                            got,
                            seconds,
                            rep.membershipsPerSecond() / 1e6,
                            fetch,
                            dump.body().length / 1e6);
                    reps.add(rep);
                }
            }
            return reps;
        }
    }
}
