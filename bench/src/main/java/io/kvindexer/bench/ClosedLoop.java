package io.kvindexer.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A closed-loop HTTP load generator: {@code clients} virtual threads, each on its own keep-alive connection
 * ({@link KeepAliveConnection}: requests encoded once, answers read through by their length) sending the next request
 * as soon as the previous one is answered, for {@code warmupSeconds} unmeasured and then {@code seconds} measured.
 */
record ClosedLoop(int clients, double seconds, double warmupSeconds) {

    /** One target's closed-loop run. */
    public record Load(
            long requests,
            long errors,
            double seconds,
            double queriesPerSecond,
            double p50Ms,
            double p99Ms,
            double p999Ms,
            double cpuMsPerRequest) {

        /** Rate and latencies as the benchmark prints them. */
        String describe() {
            return String.format(
                    "%.0f q/s p50/p99/p999 %.3f/%.3f/%.3f ms, CPU %.3f ms/request",
                    queriesPerSecond, p50Ms, p99Ms, p999Ms, cpuMsPerRequest);
        }
    }

    /** One target of {@link #interleaved}: its address and its requests, each encoded whole ({@link #post}). */
    record Target(URI uri, List<byte[]> requests) {

        /** POSTs of {@code bodies} (in turn) to {@code uri}. */
        static Target post(URI uri, List<byte[]> bodies, String contentType) {
            return new Target(
                    uri,
                    bodies.stream()
                            .map(b -> KeepAliveConnection.post(uri, contentType, b))
                            .toList());
        }
    }

    /**
     * Each target's warm-up, then every target's measured period cut into {@code slices} run in turn, the order
     * rotating (A B C, B C A, C A B, ...): on a shared machine whose load changes from second to second, targets
     * compared in a ratio see the same stretches of it, not one target the busy seconds and the other the quiet
     * ones. A target's {@link Load} sums its slices; latencies count successful (200) answers only.
     */
    List<Load> interleaved(List<Target> targets, int slices) throws InterruptedException {
        for (Target t : targets) {
            send(t, (long) (warmupSeconds * 1e9), null, new int[clients]);
        }
        List<Tally> tallies = new ArrayList<>();
        targets.forEach(t -> tallies.add(new Tally()));
        long slice = (long) (seconds * 1e9 / slices);
        for (int s = 0; s < slices; s++) {
            for (int k = 0; k < targets.size(); k++) {
                int t = (s + k) % targets.size();
                tallies.get(t).measure(targets.get(t), slice);
            }
        }
        return tallies.stream().map(Tally::load).toList();
    }

    /** One target's latencies, errors and measured time over its slices. */
    private final class Tally {
        private final long[][] perClient = new long[clients][];
        private final int[] counts = new int[clients];
        private final long[] errors = new long[clients];
        private final int[] cursors = new int[clients]; // each client's next body: slices go on through the list
        private long nanos;
        private long cpuNanos;

        void measure(Target t, long slice) throws InterruptedException {
            long start = System.nanoTime();
            long cpu = processCpuNanos();
            send(
                    t,
                    slice,
                    (c, lat, ok) -> {
                        if (!ok) {
                            errors[c]++;
                            return;
                        }
                        if (perClient[c] == null) {
                            perClient[c] = new long[1 << 14];
                        } else if (counts[c] == perClient[c].length) {
                            perClient[c] = Arrays.copyOf(perClient[c], counts[c] * 2);
                        }
                        perClient[c][counts[c]++] = lat;
                    },
                    cursors);
            nanos += System.nanoTime() - start;
            cpuNanos += processCpuNanos() - cpu;
        }

        Load load() {
            double elapsed = nanos / 1e9;
            int total = Arrays.stream(counts).sum();
            long[] all = new long[total];
            int p = 0;
            for (int c = 0; c < clients; c++) {
                if (counts[c] > 0) {
                    System.arraycopy(perClient[c], 0, all, p, counts[c]);
                    p += counts[c];
                }
            }
            Latencies lat = new Latencies(all, total);
            return new Load(
                    total,
                    Arrays.stream(errors).sum(),
                    elapsed,
                    total / elapsed,
                    lat.percentileMicros(50) / 1e3,
                    lat.percentileMicros(99) / 1e3,
                    lat.percentileMicros(99.9) / 1e3,
                    total == 0 ? 0 : cpuNanos / 1e6 / total);
        }
    }

    /**
     * This process's CPU time (client, servers, ingest and GC alike). Per request, it is the figure a machine shared
     * with other work disturbs least: their load stretches the wall clock, not the CPU a request costs here.
     */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    private interface Sink {
        void record(int client, long latencyNanos, boolean ok);
    }

    /**
     * {@code clients} virtual threads, each on its own connection sending one request after the other until
     * {@code nanos} have passed; a failed exchange counts as an error and the next request opens a new connection.
     */
    private void send(Target target, long nanos, Sink sink, int[] cursors) throws InterruptedException {
        List<byte[]> requests = target.requests();
        long end = System.nanoTime() + nanos;
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int id = c;
            threads.add(Thread.ofVirtual().start(() -> {
                int i = id + cursors[id];
                KeepAliveConnection conn = null;
                while (System.nanoTime() < end) {
                    long t0 = System.nanoTime();
                    boolean ok;
                    try {
                        if (conn == null) {
                            conn = new KeepAliveConnection(target.uri());
                        }
                        ok = conn.exchange(requests.get(i % requests.size())) == 200;
                        if (conn.closedByServer()) {
                            conn = close(conn);
                        }
                    } catch (IOException e) {
                        ok = false;
                        conn = close(conn);
                    }
                    long lat = System.nanoTime() - t0;
                    i++;
                    if (sink != null) {
                        sink.record(id, lat, ok);
                    }
                }
                close(conn);
                cursors[id] = i - id;
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    /** Closes {@code conn} if open, ignoring a failure to (the connection is dropped either way); returns null. */
    private static KeepAliveConnection close(KeepAliveConnection conn) {
        if (conn != null) {
            try {
                conn.close();
            } catch (IOException e) {
                // dropped either way
            }
        }
        return null;
    }
}
