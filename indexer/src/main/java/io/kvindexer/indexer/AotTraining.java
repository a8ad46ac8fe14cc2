package io.kvindexer.indexer;

import io.kvindexer.indexer.ingest.ZmqContext;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * {@code --aot-training}: the training run of the JVM's AOT cache (JEP 483/515), so that the cache holds the classes
 * and method profiles a started service and a restarted replica use. On loopback only: a source indexer ingests from
 * the demo's embedded engines and answers queries, a second one recovers from its dump, then both stop.
 */
final class AotTraining {

    private static final int BURST = 3000;
    private static final int QUERIES = 2000;

    private AotTraining() {}

    static void run() {
        try (IndexerApp source = IndexerApp.start("--host", "127.0.0.1", "--port", "0");
                Demo demo = Demo.start(source.workers()::register);
                HttpClient http = HttpClient.newHttpClient()) {
            demo.burst(BURST);
            source.indexers().flushAll().join();
            String query = "{\"model_name\":\"" + Demo.MODEL + "\",\"token_ids\":["
                    + Arrays.stream(demo.exampleQuery())
                            .mapToObj(Integer::toString)
                            .collect(Collectors.joining(","))
                    + "]}";
            for (int i = 0; i < QUERIES; i++) {
                send(http, source.baseUrl() + "/query", query);
            }
            get(http, source.baseUrl() + "/workers");
            get(http, source.baseUrl() + "/metrics");
            try (IndexerApp replica =
                    IndexerApp.start("--host", "127.0.0.1", "--port", "0", "--peers", source.baseUrl())) {
                long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (!replica.gate().isOpen()) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("the training replica did not recover within 60 s");
                    }
                    Thread.sleep(20);
                }
                String answer = send(http, replica.baseUrl() + "/query", query);
                if (!answer.contains("scores")) {
                    throw new IllegalStateException("the training replica answered " + answer);
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException("AOT training failed: " + e.getMessage(), e);
        } finally {
            ZmqContext.closeShared();
        }
    }

    private static String send(HttpClient http, String url, String json) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString()).body();
    }

    private static void get(HttpClient http, String url) throws Exception {
        http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
