package io.kvindexer.indexer.bench;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.index.ModelIndex;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;

/**
 * Peer recovery: a source indexer is filled over ZeroMQ from the trace (about 1 M memberships with the defaults),
 * then a fresh replica is started with {@code --peers} pointing at it and the recovery delay set to zero; the time
 * from start until its startup gate opens with every membership applied is the recovery time. The source's
 * {@code /dump} fetch alone is timed too, to split transfer from apply.
 */
@Command(name = "recovery-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Time for a fresh replica to fetch and apply a peer's dump.")
public final class RecoveryBench implements Callable<Integer> {

    @Mixin
    WorkloadOptions workload = defaults();

    @Option(names = "--threads", description = "indexer writer threads (default: ${DEFAULT-VALUE})")
    int threads = 1;

    @Option(names = "--repetitions", description = "replicas recovered; the median is reported (default: ${DEFAULT-VALUE})")
    int repetitions = 3;

    @Option(names = "--json", description = "write the results here as JSON")
    Path json;

    /** One recovery: memberships copied, seconds, and the dump fetch alone. */
    public record Rep(long memberships, double recoverySeconds, double membershipsPerSecond, double dumpFetchSeconds,
                      long dumpBytes) {
    }

    private static WorkloadOptions defaults() {
        WorkloadOptions o = new WorkloadOptions();
        o.workers = 16;
        o.engineBlocks = 65_536;
        return o;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new RecoveryBench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        List<Rep> reps = runBench();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("memberships", reps.get(0).memberships());
        out.put("recovery_s", Medians.of(reps, Rep::recoverySeconds));
        out.put("memberships_per_s", Medians.of(reps, Rep::membershipsPerSecond));
        out.put("dump_fetch_s", Medians.of(reps, Rep::dumpFetchSeconds));
        out.put("dump_bytes", reps.get(0).dumpBytes());
        out.put("reps", reps);
        BenchHttp.report(out, json);
        return 0;
    }

    public List<Rep> runBench() throws Exception {
        Workload w = workload.build();
        try (IndexerApp source = IndexerApp.start("--port", "0", "--threads", Integer.toString(threads));
             SimFleet fleet = new SimFleet(w, new BenchHttp(source.baseUrl()))) {
            fleet.startAndRegister();
            for (int worker = 0; worker < fleet.workers(); worker++) {
                fleet.publishAll(worker);
            }
            List<SimFleet.Marker> finals = new ArrayList<>();
            for (int worker = 0; worker < fleet.workers(); worker++) {
                finals.add(fleet.publishMarker(worker));
            }
            BenchHttp http = new BenchHttp(source.baseUrl());
            for (SimFleet.Marker m : finals) {
                m.lagNanos(http);
            }
            long expected = memberships(source);
            System.out.printf("source holds %d memberships (the simulated engines: %d + markers)%n", expected,
                    w.expectedMemberships());
            List<Rep> reps = new ArrayList<>();
            for (int r = 0; r < repetitions; r++) {
                long f0 = System.nanoTime();
                HttpResponse<byte[]> dump = new BenchHttp(source.baseUrl()).client().send(
                        HttpRequest.newBuilder(URI.create(source.baseUrl() + "/dump")).GET().build(),
                        HttpResponse.BodyHandlers.ofByteArray());
                double fetch = (System.nanoTime() - f0) / 1e9;
                IndexerConfig config = IndexerConfig.defaults().withPeers(List.of(source.baseUrl()))
                        .withRecoveryDelay(Duration.ZERO);
                long t0 = System.nanoTime();
                try (IndexerApp replica = IndexerApp.start(config)) {
                    while (replica.gate().isRecovering()) {
                        LockSupport.parkNanos(100_000); // poll without taking a core from the recovery
                    }
                    replica.indexers().flushAll().join();
                    double seconds = (System.nanoTime() - t0) / 1e9;
                    long got = memberships(replica);
                    if (got != expected) {
                        throw new IllegalStateException("replica recovered " + got + " memberships, source holds "
                                + expected);
                    }
                    Rep rep = new Rep(got, seconds, got / seconds, fetch, dump.body().length);
                    System.out.printf("rep %d: %d memberships recovered in %.3f s (%.2f M/s); /dump fetch alone "
                            + "%.3f s, %.1f MB%n", r + 1, got, seconds, rep.membershipsPerSecond() / 1e6, fetch,
                            dump.body().length / 1e6);
                    reps.add(rep);
                }
            }
            return reps;
        }
    }

    private static long memberships(IndexerApp app) {
        app.indexers().flushAll().join();
        return app.indexers().all().stream().map(ModelIndex::stats).mapToLong(s -> s.memberships()).sum();
    }
}
