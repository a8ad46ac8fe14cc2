package io.kvindexer.bench;

import io.kvindexer.indexer.common.Durations;
import io.kvindexer.indexer.common.StorageTier;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.zeromq.ZContext;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Churn for N minutes against an indexer in its own process, over real ZeroMQ streams (issue 23 §6): the
 * conversation trace at a steady rate on engine stand-ins ({@link SoakEngine}: an LRU device tier, a host tier that
 * never removes), an engine restart and an unregister + register of a running engine every period, a share of
 * batches dropped live and replayed, and a TTL on the host tier. Every period, and at the end, it pauses the traffic
 * and prints the indexer process's heap after GC against the index's memberships, its threads and open
 * descriptors, replays, and whether {@code /dump} equals the stand-ins' ground truth. At the end a fresh indexer
 * recovers the same content from the soaked one, and the two heaps are compared.
 */
@Command(
        name = "soak-bench",
        description = "Minutes of churn against real ZeroMQ streams: memory, threads, descriptors and exactness.")
public final class SoakBench extends BenchCommand {

    private static final String MODEL = "soak-model";
    private static final StorageTier TTL_TIER = StorageTier.HOST_PINNED;

    @Option(names = "--trace", description = "conversation trace (JSONL)")
    Path trace = Path.of("data", "mooncake_conversation_trace.jsonl");

    @Option(names = "--minutes", description = "how long the churn runs")
    double minutes = 10;

    @Option(names = "--report-every", description = "a paused check and a report line this often")
    String reportEvery = "60s";

    @Option(names = "--engines", description = "engine stand-ins")
    int engines = 8;

    @Option(names = "--rate", description = "trace requests per second, over all engines")
    double rate = 100;

    @Option(names = "--engine-blocks", description = "device-tier blocks each stand-in holds (LRU)")
    int engineBlocks = 8192;

    @Option(names = "--block-size", description = "tokens per block (one trace block id is one block)")
    int blockSize = 16;

    @Option(names = "--ttl", description = "--block-ttl of the host_pinned tier")
    String ttl = "30s";

    @Option(names = "--drop-percent", description = "share of batches dropped live (replayed from the engine)")
    double dropPercent = 1;

    @Option(names = "--heap", description = "-Xmx of the indexer process")
    String heap = "512m";

    @Option(
            names = "--indexer-arg",
            description = "an extra flag for the indexer (repeatable), e.g. --indexer-arg=--threads=2")
    List<String> indexerArgs = new ArrayList<>();

    @Option(
            names = "--clear-on-reregister",
            negatable = true,
            description = "a re-registered engine clears its cache (AllBlocksCleared), so its ground truth stays"
                    + " knowable without --unregister-grace")
    boolean clearOnReregister = true;

    @Option(names = "--seed", description = "request-to-engine assignment and drops")
    long seed = 23;

    /** The figures of one check, as printed. */
    record Check(
            String at,
            long memberships,
            long heapBytes,
            int threads,
            int fds,
            long replaysOk,
            long replayedBatches,
            long expiredTtl,
            long convergeMs,
            String difference) {

        String line() {
            return String.format(
                    "%-6s memberships %,9d  heap %7.1f MB  threads %4d  fds %4d  replays %,6d (%,7d batches)  "
                            + "ttl-expired %,9d  dump %s (%,d ms)",
                    at,
                    memberships,
                    heapBytes / 1e6,
                    threads,
                    fds,
                    replaysOk,
                    replayedBatches,
                    expiredTtl,
                    difference == null ? "== ground truth" : "DIFFERS: " + difference,
                    convergeMs);
        }
    }

    private final List<SoakEngine> fleet = new ArrayList<>();
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private SoakProcess indexer;
    private Duration ttlDuration;
    final List<Check> checks = new ArrayList<>();
    boolean exact;
    double heapOverFresh;

    @Override
    public Integer call() throws Exception {
        ttlDuration = Durations.parse(ttl);
        MooncakeTrace requests = MooncakeTrace.load(trace, 0);
        long idSpan = requests.maxId() + 1;
        Path log = Files.createTempFile("soak-indexer", ".log");
        List<String> flags = new ArrayList<>(List.of("--block-ttl", TTL_TIER.jsonName() + "=" + ttl));
        flags.addAll(indexerArgs);
        System.out.printf(
                "soak: %s min, %d engines × %,d device blocks, %.0f requests/s, %.1f%% batches dropped, TTL %s on %s;"
                        + " indexer log %s%n",
                minutes, engines, engineBlocks, rate, dropPercent, ttl, TTL_TIER.jsonName(), log);
        try (ZContext context = new ZContext(1)) {
            indexer = SoakProcess.start(heap, flags, log);
            try {
                for (int i = 0; i < engines; i++) {
                    SoakEngine e = new SoakEngine(i + 1, blockSize, engineBlocks, context);
                    fleet.add(e);
                    register(e);
                }
                checks.add(check("start"));
                churn(requests, idSpan);
                exact = finalCheck();
                heapOverFresh = compareWithFresh(log);
            } finally {
                fleet.forEach(SoakEngine::close);
                indexer.close();
            }
        }
        long threadsSpread = checks.stream().mapToInt(Check::threads).max().orElse(0)
                - checks.stream().mapToInt(Check::threads).min().orElse(0);
        System.out.printf(
                "soak result: final /dump %s; heap %.3f × the same content indexed fresh (goal <= 1.10); threads"
                        + " spread %d over the run%n",
                exact ? "exact" : "NOT exact", heapOverFresh, threadsSpread);
        return exact ? 0 : 1;
    }

    private void churn(MooncakeTrace requests, long idSpan) throws Exception {
        Random rng = new Random(seed);
        long period = Durations.parse(reportEvery).toNanos();
        long end = System.nanoTime() + (long) (minutes * 60e9);
        long nextReport = System.nanoTime() + period;
        long interval = (long) (1e9 / rate);
        long next = System.nanoTime();
        int served = 0;
        int periods = 0;
        boolean restarted = false;
        boolean reregistered = false;
        while (System.nanoTime() < end) {
            MooncakeTrace.Request r =
                    requests.requests().get(served % requests.requests().size());
            long offset = (long) (served / requests.requests().size()) * idSpan; // each pass is new content
            long[] ids = r.hashIds().clone();
            for (int i = 0; i < ids.length; i++) {
                ids[i] += offset;
            }
            fleet.get(rng.nextInt(fleet.size())).serve(ids, rng.nextDouble() * 100 < dropPercent);
            served++;
            long now = System.nanoTime();
            double phase = 1 - (double) (nextReport - now) / period;
            if (!restarted && phase >= 1.0 / 3) {
                SoakEngine e = fleet.get(periods % fleet.size());
                e.restart();
                restarted = true;
            }
            if (!reregistered && phase >= 2.0 / 3) {
                reregister(fleet.get((periods + fleet.size() / 2) % fleet.size()));
                reregistered = true;
            }
            if (now >= nextReport) {
                periods++;
                checks.add(check(String.format("%.1fm", periods * period / 60e9)));
                restarted = false;
                reregistered = false;
                nextReport = System.nanoTime() + period;
                next = System.nanoTime();
            }
            next += interval;
            LockSupport.parkNanos(next - System.nanoTime());
        }
    }

    /** Unregisters a running engine and registers it again at the same endpoints. */
    private void reregister(SoakEngine e) throws Exception {
        post("/unregister", "{\"instance_id\":" + e.instanceId + ",\"model_name\":\"" + MODEL + "\"}", 200);
        int before = e.sim.subscriptions();
        register(e);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (e.sim.subscriptions() <= before && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        if (clearOnReregister) {
            e.clearCache();
        }
    }

    /** Pauses, waits until /dump matches (at most a minute), measures. */
    private Check check(String at) throws Exception {
        for (SoakEngine e : fleet) {
            e.ping();
        }
        long t0 = System.nanoTime();
        long margin = Math.min(2000, ttlDuration.toMillis() / 4);
        String difference;
        SoakDump dump;
        do {
            Map<Long, Set<Long>> recent = new HashMap<>();
            for (SoakEngine e : fleet) {
                recent.put(e.instanceId, e.hostStoredWithin(ttlDuration.toMillis() - margin));
            }
            dump = SoakDump.fetch(http, indexer.baseUrl());
            difference = SoakDump.difference(dump, fleet, TTL_TIER, recent);
            if (difference != null) {
                Thread.sleep(200);
            }
        } while (difference != null && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(60));
        long convergeMs = (System.nanoTime() - t0) / 1_000_000;
        String metrics = get("/metrics");
        Check c = new Check(
                at,
                dump.memberships(),
                indexer.heapAfterGc(),
                indexer.threads(),
                indexer.openFds(),
                sample(metrics, "dynamo_kvindexer_replays_total{result=\"ok\"}"),
                sample(metrics, "dynamo_kvindexer_replayed_batches_total"),
                sample(
                        metrics,
                        "dynamo_kvindexer_blocks_expired_total{reason=\"ttl\",tier=\"" + TTL_TIER.jsonName() + "\"}"),
                convergeMs,
                difference);
        System.out.println(c.line());
        return c;
    }

    /** Traffic stopped: once the TTL has passed, the host tier is empty and every other tier exact. */
    private boolean finalCheck() throws Exception {
        Thread.sleep(ttlDuration.toMillis() + 2000);
        Check c = check("end");
        checks.add(c);
        boolean hostEmpty = fleet.stream()
                .allMatch(e -> e.hostStoredWithin(ttlDuration.toMillis()).isEmpty());
        return c.difference() == null && hostEmpty && ttlTierEmptiesWithin(ttlDuration.plusSeconds(2));
    }

    /**
     * A batch replayed while the end check converged stores its host blocks again, and a store starts the TTL over
     * (--block-ttl): so the tier must be empty within one more TTL, not at once.
     */
    private boolean ttlTierEmptiesWithin(Duration patience) throws Exception {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            boolean empty = SoakDump.fetch(http, indexer.baseUrl()).held.values().stream()
                    .allMatch(t -> t.getOrDefault(TTL_TIER, new it.unimi.dsi.fastutil.longs.LongOpenHashSet())
                            .isEmpty());
            if (empty || System.nanoTime() > deadline) {
                return empty;
            }
            Thread.sleep(200);
        }
    }

    /** A second indexer recovers the soaked one's content; its heap after GC against the soaked one's. */
    private double compareWithFresh(Path log) throws Exception {
        long soaked = indexer.heapAfterGc();
        List<String> flags =
                new ArrayList<>(List.of("--block-ttl", TTL_TIER.jsonName() + "=" + ttl, "--peers", indexer.baseUrl()));
        flags.addAll(indexerArgs);
        try (SoakProcess fresh = SoakProcess.start(heap, flags, log.resolveSibling(log.getFileName() + ".fresh"))) {
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (status(fresh.baseUrl() + "/ready") != 200 && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            long memberships = SoakDump.fetch(http, fresh.baseUrl()).memberships();
            long freshHeap = fresh.heapAfterGc();
            System.out.printf(
                    "fresh: %,d memberships recovered; heap %.1f MB (fresh) vs %.1f MB (soaked, %,d memberships):"
                            + " %.3f ×%n",
                    memberships,
                    freshHeap / 1e6,
                    soaked / 1e6,
                    checks.getLast().memberships(),
                    (double) soaked / freshHeap);
            return (double) soaked / freshHeap;
        }
    }

    private void register(SoakEngine e) throws Exception {
        post(
                "/register",
                "{\"instance_id\":" + e.instanceId + ",\"endpoint\":\"" + e.sim.endpoint() + "\",\"replay_endpoint\":\""
                        + e.sim.replayEndpoint() + "\",\"model_name\":\"" + MODEL + "\",\"block_size\":" + blockSize
                        + "}",
                201);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (e.sim.subscriptions() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }

    private void post(String path, String body, int expected) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(indexer.baseUrl() + path))
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != expected) {
            throw new IllegalStateException(path + " answered " + r.statusCode() + ": " + r.body());
        }
    }

    private String get(String path) throws Exception {
        return get(indexer.baseUrl() + path, Duration.ofSeconds(30), HttpResponse.BodyHandlers.ofString())
                .body();
    }

    /** The status of a GET, or -1 when none came within 10 s (the replica is not up yet). */
    private int status(String url) {
        try {
            return get(url, Duration.ofSeconds(10), HttpResponse.BodyHandlers.discarding())
                    .statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    private <T> HttpResponse<T> get(String url, Duration timeout, HttpResponse.BodyHandler<T> body)
            throws IOException, InterruptedException {
        return http.send(
                HttpRequest.newBuilder(URI.create(url)).timeout(timeout).build(), body);
    }

    /** The value of one exposition line (0 when absent). */
    static long sample(String exposition, String series) {
        Matcher m = Pattern.compile("^" + Pattern.quote(series) + " (\\S+)$", Pattern.MULTILINE)
                .matcher(exposition);
        return m.find() ? (long) Double.parseDouble(m.group(1)) : 0;
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new SoakBench()).execute(args));
    }
}
