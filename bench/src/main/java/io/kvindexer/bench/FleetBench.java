package io.kvindexer.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.sim.EngineFleetMain;
import java.io.BufferedReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Issue 22's fleet figures: an indexer in this process, engine stand-ins in {@code --processes} child processes, all
 * registered: by default real libzmq publishers ({@code libzmq_fleet.py} on Debian's python3 with python3-zmq and
 * python3-msgpack; no replay endpoint), or with {@code --fleet jeromq} {@link EngineFleetMain}'s simulators (a PUB and
 * a replay ROUTER each, and a thread each: too heavy for thousands on two cores). Prints the idle cost per engine
 * (threads, open files, resident memory after GC, against the same indexer before any registration), the time until
 * every listener is active and subscribed, and the latency until each engine's first block is visible in
 * {@code /query} (max over the engines). With {@code --burst N}, then every engine publishes N batches of
 * {@code --blocks} blocks at once, and the aggregate rate until the last is applied (every engine's watermark at its
 * last seq) is printed. With {@code --pace R}, every engine then publishes {@code --pace-rounds} batches of
 * {@code --blocks} blocks, all engines together at R block events/s in total, and the lag from each batch's scheduled
 * publish to its listener's watermark passing it is printed (p50/p99 over every engine and batch; the watermarks are
 * polled every millisecond). Usage: {@code bin/bench FleetBench [--engines 4096] [--processes 4] [--block-size 4]
 * [--burst N] [--blocks B] [--pace R [--pace-rounds 50]] [--fleet libzmq|jeromq]}. Goal 3 (the fleet against one
 * engine on the same workload, in the same run) is {@code --compare}: see {@link FleetCompare}.
 */
public final class FleetBench {

    private static final ObjectMapper JSON = new ObjectMapper();

    private FleetBench() {}

    public static void main(String[] args) throws Exception {
        if (Arrays.asList(args).contains("--help")) {
            System.out.println(
                    "usage: bin/bench FleetBench [--engines 4096] [--processes 4] [--block-size 4] [--burst N]"
                            + " [--blocks B] [--pace BLOCK_EVENTS_PER_S [--pace-rounds 50]] [--fleet libzmq|jeromq]\n"
                            + "       bin/bench FleetBench --compare [--engines 1024] [--processes 1] [--block-size 16]"
                            + " [--batch-events 256] [--total-batches 16384] [--repetitions 3] [--lag-rate R]"
                            + " [--warm-ups 1] [--publishers libzmq|zmtp] [--fleet-only] [--no-lag | --lag-only]");
            return;
        }
        if (Arrays.asList(args).contains("--compare")) {
            FleetCompare.main(args); // goal 3: one engine against the fleet, same workload, same run
            return;
        }
        int engines = 4096;
        int processes = 4;
        int burst = 0;
        int blocks = 1;
        int blockSize = 4;
        double paceRate = 0;
        int paceRounds = 50;
        boolean libzmq = true;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--engines" -> engines = Integer.parseInt(args[i + 1]);
                case "--processes" -> processes = Integer.parseInt(args[i + 1]);
                case "--burst" -> burst = Integer.parseInt(args[i + 1]);
                case "--blocks" -> blocks = Integer.parseInt(args[i + 1]);
                case "--block-size" -> blockSize = Integer.parseInt(args[i + 1]);
                case "--pace" -> paceRate = Double.parseDouble(args[i + 1]);
                case "--pace-rounds" -> paceRounds = Integer.parseInt(args[i + 1]);
                case "--fleet" ->
                    libzmq = switch (args[i + 1]) {
                        case "libzmq" -> true;
                        case "jeromq" -> false;
                        default -> throw new IllegalArgumentException("--fleet libzmq|jeromq");
                    };
                default -> throw new IllegalArgumentException("unknown flag " + args[i]);
            }
        }
        int perProcess = (engines + processes - 1) / processes;
        List<Process> children = new ArrayList<>();
        List<BufferedReader> from = new ArrayList<>();
        List<PrintStream> to = new ArrayList<>();
        List<String[]> endpoints = new ArrayList<>();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path script = Files.createTempFile("libzmq_fleet", ".py");
        try (var in = FleetBench.class.getResourceAsStream("libzmq_fleet.py")) {
            Files.write(script, in.readAllBytes());
        }
        script.toFile().deleteOnExit();
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults())) {
            HttpClient http = HttpClient.newHttpClient();
            String base = app.baseUrl();
            System.gc();
            Cost idle = Cost.now();
            for (int p = 0; p < processes; p++) {
                int n = Math.min(perProcess, engines - p * perProcess);
                List<String> command = libzmq
                        ? List.of(
                                "/usr/bin/python3", script.toString(), Integer.toString(n), Integer.toString(blockSize))
                        : List.of(
                                java.toString(),
                                "-Xmx1g",
                                "-cp",
                                System.getProperty("java.class.path"),
                                EngineFleetMain.class.getName(),
                                Integer.toString(n),
                                Integer.toString(blockSize));
                children.add(FleetPublishers.spawn(command, from, to, line -> endpoints.add(line.split(" "))));
            }
            long start = System.nanoTime();
            for (int i = 0; i < endpoints.size(); i++) {
                String[] e = endpoints.get(i);
                String replay = e[3].equals("-") ? "" : ",\"replay_endpoint\":\"" + e[3] + "\"";
                post(
                        http,
                        base + "/register",
                        "{\"instance_id\":" + (i + 1) + ",\"endpoint\":\"" + e[2] + "\"" + replay
                                + ",\"model_name\":\"m\",\"block_size\":" + blockSize + "}");
            }
            long registered = System.nanoTime();
            while (app.workers().listenerCounts().get(ListenerStatus.ACTIVE) < engines
                    || subscribed(from, to) < engines) {
                Thread.sleep(200);
            }
            long ready = System.nanoTime();
            Thread.sleep(2_000);
            System.gc();
            Thread.sleep(500);
            Cost busy = Cost.now();
            System.out.printf(
                    "%d engines in %d processes: registered in %.1f s, all active and subscribed after %.1f s%n",
                    engines, processes, (registered - start) / 1e9, (ready - start) / 1e9);
            System.out.printf(
                    "idle cost per engine: %.2f open files, %.1f KB resident (after GC); threads %d -> %d (+%d)%n",
                    (busy.files - idle.files) / (double) engines,
                    (busy.rssKb - idle.rssKb) / (double) engines,
                    idle.threads,
                    busy.threads,
                    busy.threads - idle.threads);

            long published = System.nanoTime();
            for (PrintStream t : to) {
                t.println("publish 1");
            }
            for (BufferedReader r : from) {
                r.readLine();
            }
            long sent = System.nanoTime();
            long applied = 0; // every listener's watermark at the first seq: handed to the index
            while (applied == 0 && System.nanoTime() - published < 60_000_000_000L) {
                int at = 0;
                for (int i = 0; i < engines; i++) {
                    at += app.workers().watermark(i + 1, 0).get() == 0 ? 1 : 0;
                }
                if (at == engines) {
                    applied = System.nanoTime();
                } else {
                    Thread.sleep(1);
                }
            }
            System.out.printf(
                    "first block of every engine applied (its listener's watermark) %.2f s after the publish began%n",
                    (applied - published) / 1e9);
            boolean[] seen = new boolean[engines];
            int left = engines;
            long lastSeen = 0;
            // 8 queries at a time: a serial pass of thousands of /query calls would itself take most of 10 s
            var queriers = Executors.newFixedThreadPool(8);
            try {
                while (left > 0 && System.nanoTime() - published < 120_000_000_000L) {
                    List<Future<Long>> answers = new ArrayList<>();
                    for (int i = 0; i < engines; i++) {
                        if (seen[i]) {
                            answers.add(null);
                            continue;
                        }
                        int engine = i;
                        String tokens = Arrays.toString(EngineFleetMain.tokens(
                                        1, Integer.parseInt(endpoints.get(i)[1]), blockSize))
                                .replace(" ", "");
                        answers.add(queriers.submit(() -> JSON.readTree(post(
                                                        http,
                                                        base + "/query",
                                                        "{\"model_name\":\"m\",\"token_ids\":" + tokens + "}"))
                                                .path("scores")
                                                .path(Integer.toString(engine + 1))
                                                .path("0")
                                                .asInt()
                                        > 0
                                ? System.nanoTime()
                                : 0L));
                    }
                    for (int i = 0; i < engines; i++) {
                        long at = answers.get(i) == null ? 0 : answers.get(i).get();
                        if (at != 0) {
                            seen[i] = true;
                            left--;
                            lastSeen = Math.max(lastSeen, at);
                        }
                    }
                }
            } finally {
                queriers.shutdownNow();
            }
            System.out.printf(
                    "first block of every engine: publish took %.2f s; %d of %d visible in /query, the last %.2f s after"
                            + " the publish began (goal: within 10 s; one pass of a /query per engine, 8 at a time)%n",
                    (sent - published) / 1e9, engines - left, engines, (lastSeen - published) / 1e9);
            if (burst > 0) {
                burst(app, from, to, engines, burst, blocks, libzmq);
            }
            if (paceRate > 0) {
                pace(app, from, to, engines, perProcess, burst, paceRounds, blocks, paceRate, libzmq);
            }
        } finally {
            for (PrintStream t : to) {
                t.println("quit");
            }
            for (Process c : children) {
                c.destroy();
            }
        }
    }

    /** Every engine publishes {@code n} batches of {@code blocks} blocks at once: block events/s until all applied. */
    private static void burst(
            IndexerApp app,
            List<BufferedReader> from,
            List<PrintStream> to,
            int engines,
            int n,
            int blocks,
            boolean libzmq)
            throws Exception {
        if (libzmq) { // encoded before the clock starts
            for (PrintStream t : to) {
                t.println("prepare " + n + " " + blocks);
            }
            for (BufferedReader r : from) {
                r.readLine();
            }
        }
        long start = System.nanoTime();
        for (PrintStream t : to) {
            t.println(libzmq ? "burst" : "burst " + n + " " + blocks);
        }
        long last = n; // seq 0 was the first publish; the burst is seqs 1..n
        int done = 0;
        while (done < engines && System.nanoTime() - start < 300_000_000_000L) {
            done = 0;
            for (int i = 0; i < engines; i++) {
                if (app.workers().watermark(i + 1, 0).get() == last) {
                    done++;
                }
            }
            if (done < engines) {
                Thread.sleep(20);
            }
        }
        long applied = System.nanoTime();
        for (BufferedReader r : from) {
            r.readLine();
        }
        long blockEvents = (long) engines * n * blocks;
        double seconds = (applied - start) / 1e9;
        System.out.printf(
                "burst: %d engines x %d batches x %d blocks = %d block events, all applied: %d of %d engines after"
                        + " %.2f s = %.0f block events/s (%.0f batches/s); sequence gaps so far %s%n",
                engines,
                n,
                blocks,
                blockEvents,
                done,
                engines,
                seconds,
                blockEvents / seconds,
                (double) engines * n / seconds,
                verifiedGaps(app));
    }

    /**
     * {@code rounds} rounds of one batch of {@code blocks} blocks per engine at {@code rate} block events/s in total;
     * the lag of each (engine, batch) from its scheduled publish to its watermark passing it. Seqs start after the
     * first publish (0) and the burst (1..burst).
     */
    private static void pace(
            IndexerApp app,
            List<BufferedReader> from,
            List<PrintStream> to,
            int engines,
            int perProcess,
            int burst,
            int rounds,
            int blocks,
            double rate,
            boolean libzmq)
            throws Exception {
        double roundsPerSecond = rate / ((double) engines * blocks);
        for (PrintStream t : to) {
            t.println("pace " + rounds + " " + blocks + " " + roundsPerSecond);
        }
        long first = burst + 1L;
        long[] seen = new long[engines];
        Arrays.fill(seen, first - 1);
        long[] observed = new long[engines * rounds]; // epoch ms when (engine, round) was first seen applied
        int count = 0;
        long deadline = System.nanoTime() + (long) (rounds / roundsPerSecond * 1e9) + 120_000_000_000L;
        while (count < observed.length && System.nanoTime() < deadline) {
            long now = System.currentTimeMillis();
            for (int i = 0; i < engines; i++) {
                long w = app.workers().watermark(i + 1, 0).get();
                while (seen[i] < w && seen[i] < first + rounds - 1) {
                    seen[i]++;
                    observed[i * rounds + (int) (seen[i] - first)] = now;
                    count++;
                }
            }
            Thread.sleep(1);
        }
        long[] childStart = new long[from.size()];
        for (int p = 0; p < from.size(); p++) {
            childStart[p] = Long.parseLong(from.get(p).readLine().split(" ")[2]);
        }
        long[] lags = new long[count];
        int n = 0;
        for (int i = 0; i < engines; i++) {
            for (int k = 0; k < rounds; k++) {
                long at = observed[i * rounds + k];
                if (at != 0) {
                    // the libzmq fleet spreads a round over its interval, engine by engine (EngineFleetMain does not)
                    int inProcess = Math.min(perProcess, engines - (i / perProcess) * perProcess);
                    double offset = libzmq ? (double) (i % perProcess) / inProcess : 0;
                    long due = childStart[i / perProcess] + (long) ((k + offset) * 1000 / roundsPerSecond);
                    lags[n++] = Math.max(0, at - due);
                }
            }
        }
        Arrays.sort(lags);
        System.out.printf(
                "paced: %d engines x %d batches x %d blocks at %.0f block events/s (%.2f rounds/s): %d of %d batches"
                        + " applied; lag p50 / p99 / max %d / %d / %d ms; sequence gaps so far %s%n",
                engines,
                rounds,
                blocks,
                rate,
                roundsPerSecond,
                count,
                observed.length,
                count == 0 ? 0 : lags[count / 2],
                count == 0 ? 0 : lags[Math.min(count - 1, count * 99 / 100)],
                count == 0 ? 0 : lags[count - 1],
                verifiedGaps(app));
    }

    /**
     * At the end of a run, the indexer's sequence gaps counter, from its /metrics, once the run is verified: throws
     * when an index write threw (the rest of that write was not applied, so the run's figures would count work the
     * index never did).
     */
    static String verifiedGaps(IndexerApp app) throws Exception {
        long writeFailures = app.indexers().writeFailures();
        if (writeFailures != 0) {
            throw new IllegalStateException(writeFailures + " index writes threw (see the log): the figures are void");
        }
        HttpResponse<String> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(app.baseUrl() + "/metrics"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        return r.body()
                .lines()
                .filter(l -> l.startsWith("dynamo_kvindexer_sequence_gaps_total"))
                .map(l -> l.substring(l.lastIndexOf(' ') + 1))
                .findFirst()
                .orElse("?");
    }

    private static int subscribed(List<BufferedReader> from, List<PrintStream> to) throws Exception {
        int n = 0;
        for (int p = 0; p < to.size(); p++) {
            to.get(p).println("subscribed");
            n += Integer.parseInt(from.get(p).readLine().split(" ")[1]);
        }
        return n;
    }

    private static String post(HttpClient http, String url, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .header("Content-Type", "application/json")
                .build();
        HttpResponse<String> r;
        try {
            r = http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (java.io.IOException e) {
            // the JDK client's own race on a pooled connection ("Data received while in pool", JDK-8357639) failed
            // one of 4,096 queries once: a query (not a registration) is sent again, on another connection
            if (!url.endsWith("/query")) {
                throw e;
            }
            r = http.send(request, HttpResponse.BodyHandlers.ofString());
        }
        if (r.statusCode() >= 300) {
            throw new IllegalStateException(url + " answered " + r.statusCode() + ": " + r.body());
        }
        return r.body();
    }

    /** This process's threads, open files and resident memory (Linux /proc). */
    private record Cost(int threads, long files, long rssKb) {
        static Cost now() throws Exception {
            long files;
            try (var s = Files.list(Path.of("/proc/self/fd"))) {
                files = s.count();
            }
            long rss = 0;
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmRSS:")) {
                    rss = Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
            return new Cost(Thread.getAllStackTraces().size(), files, rss);
        }
    }
}
