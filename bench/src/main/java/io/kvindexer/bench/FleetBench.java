package io.kvindexer.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.sim.EngineFleetMain;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Issue 22's fleet figures: an indexer in this process, engine stand-ins (a PUB and a replay ROUTER each) in
 * {@code --processes} child processes ({@link EngineFleetMain}), all registered. Prints the idle cost per engine
 * (threads, open files, resident memory after GC, against the same indexer before any registration), the time until
 * every listener is active and subscribed, and the latency until each engine's first block is visible in
 * {@code /query} (max over the engines). With {@code --burst N}, then every engine publishes N batches of
 * {@code --blocks} blocks at once, and the aggregate rate until the last is applied (every engine's watermark at its
 * last seq) is printed. Usage: {@code bin/bench FleetBench [--engines 4096] [--processes 4] [--burst N [--blocks B]]}.
 */
public final class FleetBench {

    private static final ObjectMapper JSON = new ObjectMapper();

    private FleetBench() {}

    public static void main(String[] args) throws Exception {
        if (Arrays.asList(args).contains("--help")) {
            System.out.println("usage: bin/bench FleetBench [--engines 4096] [--processes 4] [--burst N [--blocks B]]");
            return;
        }
        int engines = 4096;
        int processes = 4;
        int burst = 0;
        int blocks = 1;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--engines" -> engines = Integer.parseInt(args[i + 1]);
                case "--processes" -> processes = Integer.parseInt(args[i + 1]);
                case "--burst" -> burst = Integer.parseInt(args[i + 1]);
                case "--blocks" -> blocks = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown flag " + args[i]);
            }
        }
        int perProcess = (engines + processes - 1) / processes;
        List<Process> children = new ArrayList<>();
        List<BufferedReader> from = new ArrayList<>();
        List<PrintStream> to = new ArrayList<>();
        List<String[]> endpoints = new ArrayList<>();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        try (IndexerApp app = IndexerApp.start(IndexerConfig.defaults())) {
            HttpClient http = HttpClient.newHttpClient();
            String base = app.baseUrl();
            System.gc();
            Cost idle = Cost.now();
            for (int p = 0; p < processes; p++) {
                int n = Math.min(perProcess, engines - p * perProcess);
                Process child = new ProcessBuilder(
                                java.toString(),
                                "-Xmx1g",
                                "-cp",
                                System.getProperty("java.class.path"),
                                EngineFleetMain.class.getName(),
                                Integer.toString(n))
                        .redirectError(ProcessBuilder.Redirect.DISCARD)
                        .start();
                children.add(child);
                BufferedReader r =
                        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
                from.add(r);
                to.add(new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8));
                for (String line; !(line = r.readLine()).equals("READY"); ) {
                    endpoints.add(line.split(" "));
                }
            }
            long start = System.nanoTime();
            for (int i = 0; i < endpoints.size(); i++) {
                String[] e = endpoints.get(i);
                post(
                        http,
                        base + "/register",
                        "{\"instance_id\":" + (i + 1) + ",\"endpoint\":\"" + e[2] + "\",\"replay_endpoint\":\"" + e[3]
                                + "\",\"model_name\":\"m\",\"block_size\":4}");
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
            boolean[] seen = new boolean[engines];
            int left = engines;
            long lastSeen = 0;
            while (left > 0 && System.nanoTime() - published < 120_000_000_000L) {
                int engineIndex = 0;
                for (String[] e : endpoints) {
                    int i = engineIndex++;
                    if (seen[i]) {
                        continue;
                    }
                    int index = Integer.parseInt(e[1]);
                    String tokens =
                            Arrays.toString(EngineFleetMain.tokens(1, index, 4)).replace(" ", "");
                    String body = post(http, base + "/query", "{\"model_name\":\"m\",\"token_ids\":" + tokens + "}");
                    if (JSON.readTree(body)
                                    .path("scores")
                                    .path(Integer.toString(i + 1))
                                    .path("0")
                                    .asInt()
                            > 0) {
                        seen[i] = true;
                        left--;
                        lastSeen = System.nanoTime();
                    }
                }
            }
            System.out.printf(
                    "first block of every engine: publish took %.2f s; %d of %d visible, the last %.2f s after the"
                            + " publish began (goal: within 10 s)%n",
                    (sent - published) / 1e9, engines - left, engines, (lastSeen - published) / 1e9);
            if (burst > 0) {
                burst(app, from, to, engines, burst, blocks);
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
            IndexerApp app, List<BufferedReader> from, List<PrintStream> to, int engines, int n, int blocks)
            throws Exception {
        long start = System.nanoTime();
        for (PrintStream t : to) {
            t.println("burst " + n + " " + blocks);
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
                        + " %.2f s = %.0f block events/s (%.0f batches/s)%n",
                engines,
                n,
                blocks,
                blockEvents,
                done,
                engines,
                seconds,
                blockEvents / seconds,
                (double) engines * n / seconds);
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
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(url))
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .header("Content-Type", "application/json")
                        .build(),
                HttpResponse.BodyHandlers.ofString());
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
