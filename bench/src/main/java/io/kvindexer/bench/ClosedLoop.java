package io.kvindexer.bench;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A closed-loop HTTP load generator: {@code clients} virtual threads sharing one JDK HttpClient, each sending the next
 * request as soon as the previous one is answered, for {@code warmupSeconds} unmeasured and then {@code seconds}
 * measured.
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
            double p999Ms) {

        /** Rate and latencies as the benchmark prints them. */
        String describe() {
            return String.format("%.0f q/s p50/p99/p999 %.3f/%.3f/%.3f ms", queriesPerSecond, p50Ms, p99Ms, p999Ms);
        }
    }

    /**
     * The warm-up, then the measured period, of all clients POSTing {@code bodies} in turn to {@code uri}; latencies
     * count successful (200) answers only.
     */
    Load run(HttpClient client, URI uri, List<byte[]> bodies, String contentType) throws InterruptedException {
        send(client, uri, bodies, contentType, (long) (warmupSeconds * 1e9), null);
        long[][] perClient = new long[clients][];
        int[] counts = new int[clients];
        long[] errors = new long[clients];
        long measured = (long) (seconds * 1e9);
        long start = System.nanoTime();
        send(client, uri, bodies, contentType, measured, (c, lat, ok) -> {
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
        });
        double elapsed = (System.nanoTime() - start) / 1e9;
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
                lat.percentileMicros(99.9) / 1e3);
    }

    private interface Sink {
        void record(int client, long latencyNanos, boolean ok);
    }

    /** {@code clients} virtual threads, each sending one request after the other until {@code nanos} have passed. */
    private void send(HttpClient client, URI uri, List<byte[]> bodies, String contentType, long nanos, Sink sink)
            throws InterruptedException {
        long end = System.nanoTime() + nanos;
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < clients; c++) {
            int id = c;
            threads.add(Thread.ofVirtual().start(() -> {
                int i = id;
                while (System.nanoTime() < end) {
                    HttpRequest req = HttpRequest.newBuilder(uri)
                            .header("Content-Type", contentType)
                            .POST(HttpRequest.BodyPublishers.ofByteArray(bodies.get(i++ % bodies.size())))
                            .build();
                    long t0 = System.nanoTime();
                    boolean ok;
                    try {
                        HttpResponse<byte[]> r = client.send(req, HttpResponse.BodyHandlers.ofByteArray());
                        ok = r.statusCode() == 200;
                    } catch (IOException e) {
                        ok = false;
                    } catch (InterruptedException e) {
                        return;
                    }
                    long lat = System.nanoTime() - t0;
                    if (sink != null) {
                        sink.record(id, lat, ok);
                    }
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
    }
}
