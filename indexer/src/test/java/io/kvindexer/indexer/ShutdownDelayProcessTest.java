package io.kvindexer.indexer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Two real replicas behind a client that sees them as a Kubernetes Service's clients do: through an endpoint list
 * that follows {@code /ready} a second late (the endpoints controller and kube-proxy, or a router's own refresh).
 * One replica gets SIGTERM while queries flow; with {@code --shutdown-delay} longer than that lag, no query fails.
 */
class ShutdownDelayProcessTest {

    private static final Duration ENDPOINT_LAG = Duration.ofSeconds(1);

    private static IndexerProcess replica() throws Exception {
        return IndexerMainProcessTest.startLlama(
                Map.of(), "--workers", "1=tcp://127.0.0.1:1", "--shutdown-delay", "3s");
    }

    private static boolean ready(HttpClient http, String base) {
        try {
            return http.send(
                                    HttpRequest.newBuilder(URI.create(base + "/ready"))
                                            .timeout(Duration.ofMillis(500))
                                            .build(),
                                    HttpResponse.BodyHandlers.discarding())
                            .statusCode()
                    == 200;
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void aStoppingReplicaLosesNoQueryOfAClientWhoseEndpointsLag() throws Exception {
        try (IndexerProcess a = replica();
                IndexerProcess b = replica();
                HttpClient http = HttpClient.newBuilder()
                        .version(HttpClient.Version.HTTP_1_1)
                        .connectTimeout(Duration.ofSeconds(2))
                        .build()) {
            List<String> all = List.of(a.url(), b.url());
            await().atMost(Duration.ofSeconds(30)).until(() -> all.stream().allMatch(u -> ready(http, u)));
            AtomicReference<List<String>> endpoints = new AtomicReference<>(all);
            AtomicLong refreshed = new AtomicLong(System.nanoTime());
            Thread refresher = Thread.ofVirtual().start(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        Thread.sleep(ENDPOINT_LAG);
                    } catch (InterruptedException e) {
                        return;
                    }
                    endpoints.set(all.stream().filter(u -> ready(http, u)).toList());
                    refreshed.set(System.nanoTime());
                }
            });
            HttpRequest.Builder query = HttpRequest.newBuilder()
                    .header("Content-Type", "application/json")
                    .timeout(Duration.ofSeconds(5));
            String body = "{\"model_name\":\"llama\",\"token_ids\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}";
            List<String> failures = new ArrayList<>();
            AtomicInteger toA = new AtomicInteger();
            int sent = 0;
            long signalled = 0;
            long aEnded = 0;
            long start = System.nanoTime();
            try {
                // queries for a second, the SIGTERM to a, and on until a has ended and the list had a refresh more
                while (signalled == 0 || a.isAlive() || aEnded == 0 || refreshed.get() - aEnded < 0) {
                    if (signalled != 0 && aEnded == 0 && !a.isAlive()) {
                        aEnded = System.nanoTime();
                    }
                    // the SIGTERM a fifth of a lag after a refresh: the list names a for most of a lag more, as a
                    // client's would (at the moment of a refresh, the list could drop a before it answered once)
                    long sinceRefresh = System.nanoTime() - refreshed.get();
                    if (signalled == 0
                            && System.nanoTime() - start > Duration.ofSeconds(1).toNanos()
                            && sinceRefresh > ENDPOINT_LAG.toNanos() / 5
                            && sinceRefresh < ENDPOINT_LAG.toNanos() / 2) {
                        ProcessHandle.of(a.pid()).orElseThrow().destroy(); // SIGTERM, as the kubelet sends
                        signalled = System.nanoTime();
                    }
                    List<String> now = endpoints.get();
                    String target = now.get(sent % now.size());
                    sent++;
                    try {
                        HttpResponse<String> r = http.send(
                                query.uri(URI.create(target + "/query"))
                                        .POST(HttpRequest.BodyPublishers.ofString(body))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString());
                        if (r.statusCode() != 200) {
                            failures.add(target + " " + r.statusCode() + " " + r.body());
                        } else if (signalled != 0 && target.equals(a.url())) {
                            toA.incrementAndGet();
                        }
                    } catch (Exception e) {
                        failures.add(target + " " + e);
                    }
                    Thread.sleep(5);
                }
            } finally {
                refresher.interrupt();
            }
            assertThat(failures).as("queries that failed, of %d", sent).isEmpty();
            assertThat(toA.get()).as("queries a answered after its SIGTERM").isPositive();
            assertThat(endpoints.get()).containsExactly(b.url());
            assertThat(b.kill()).isTrue(); // not under test: a SIGTERM would sit out its --shutdown-delay
        }
    }
}
