package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.common.ServiceLimits;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.ingest.IdleListener;
import io.kvindexer.indexer.ingest.IngestPollers;
import io.kvindexer.indexer.ingest.ListenerStatus;
import io.kvindexer.indexer.registry.ListenerFactory;
import io.kvindexer.indexer.registry.Registration;
import io.kvindexer.indexer.registry.RegistryException;
import io.kvindexer.indexer.registry.WorkerRegistry;
import io.kvindexer.indexer.sim.EngineFleetMain;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * More engines than jeromq's default context allowed (it capped an indexer at 512 listeners): 600 engine stand-ins, a
 * PUB and a replay ROUTER each, in their own process, registered with one indexer; each publishes one block and every
 * one of them is answered by {@code /query}, with no thread per listener and at most 3 open files per engine.
 */
class FleetIngestTest {

    private static final int ENGINES = Integer.getInteger("fleet.engines", 600);
    /**
     * How long the fleet may take to subscribe, and then to be indexed: it grows with the fleet (on a loaded 2-core
     * machine 600 connections took over a minute once, while another build ran beside the tests)
     */
    private static final Duration FLEET_WAIT = Duration.ofSeconds(30).plusMillis(100L * ENGINES);

    @RegisterExtension
    final TestResources open = new TestResources();

    @Test
    void sixHundredEnginesAllIndexWithAFixedNumberOfThreads() throws Exception {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process fleet = new ProcessBuilder(
                        java.toString(),
                        "-Xmx512m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        EngineFleetMain.class.getName(),
                        Integer.toString(ENGINES))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            BufferedReader from =
                    new BufferedReader(new InputStreamReader(fleet.getInputStream(), StandardCharsets.UTF_8));
            PrintStream to = new PrintStream(fleet.getOutputStream(), true, StandardCharsets.UTF_8);
            List<String[]> engines = new ArrayList<>();
            for (String line; !(line = from.readLine()).equals("READY"); ) {
                engines.add(line.split(" "));
            }
            assertThat(engines).hasSize(ENGINES);

            IndexerApp app = open.add(IndexerApp.start(IndexerConfig.defaults()));
            HttpTestClient http = open.add(new HttpTestClient(app.baseUrl()));
            long threadsBefore = Thread.getAllStackTraces().size();
            long filesBefore = openFiles();
            for (String[] e : engines) {
                int i = Integer.parseInt(e[1]);
                http.post(
                                "/register",
                                "{\"instance_id\":" + (i + 1) + ",\"endpoint\":\"" + e[2] + "\",\"replay_endpoint\":\""
                                        + e[3] + "\",\"model_name\":\"m\",\"block_size\":4}")
                        .assertOk(201);
            }
            await().atMost(FLEET_WAIT).pollInterval(Duration.ofMillis(500)).until(() -> {
                to.println("subscribed");
                return from.readLine().equals("SUBSCRIBED " + ENGINES);
            });
            assertThat(app.workers().listenerCounts()).containsEntry(ListenerStatus.ACTIVE, ENGINES);
            // #22: at most 3 open files per idle engine (a jeromq SUB cost 5; our ZMTP connection costs 1)
            assertThat(openFiles() - filesBefore).isLessThanOrEqualTo(3L * ENGINES);
            // no thread per listener (the HTTP server's own threads may come and go a little)
            assertThat(Thread.getAllStackTraces().size() - threadsBefore).isLessThan(64);
            // the app's pollers were there before the first registration; no listener brought a thread of its own
            assertThat(Thread.getAllStackTraces().keySet().stream()
                            .filter(t -> t.getName().startsWith("kv-ingest-poller-"))
                            .count())
                    .isGreaterThanOrEqualTo(IngestPollers.DEFAULT_POLLERS);

            to.println("publish 1");
            assertThat(from.readLine()).isEqualTo("PUBLISHED 1");
            List<Integer> missing = new ArrayList<>();
            await().atMost(FLEET_WAIT).pollInterval(Duration.ofMillis(500)).until(() -> {
                missing.clear();
                for (int i = 0; i < ENGINES; i++) {
                    String tokens =
                            Arrays.toString(EngineFleetMain.tokens(1, i, 4)).replace(" ", "");
                    int score = http.post("/query", "{\"model_name\":\"m\",\"token_ids\":" + tokens + "}")
                            .json()
                            .path("scores")
                            .path(Integer.toString(i + 1))
                            .path("0")
                            .asInt();
                    if (score <= 0) {
                        missing.add(i);
                    }
                }
                return missing.isEmpty();
            });
            assertThat(missing).isEmpty();
            to.println("quit");
        } finally {
            fleet.destroy();
            assertThat(fleet.waitFor(30, TimeUnit.SECONDS)).isTrue();
        }
    }

    @Test
    void aRegistrationAboveWhatTheProcessCanHoldIsAConflictNamingTheLimit() throws Exception {
        ListenerFactory idle = (spec, watermark, sink) -> IdleListener.pending(spec);
        try (Indexers indexers = new Indexers(IndexOptions.defaults());
                WorkerRegistry registry = new WorkerRegistry(indexers, idle, ServiceLimits.DEFAULTS)) {
            registry.capListeners(2);
            registry.register(registration(1));
            registry.register(registration(2));
            RegistryException refused = org.junit.jupiter.api.Assertions.assertThrows(
                    RegistryException.class, () -> registry.register(registration(3)));
            assertThat(refused.kind()).isEqualTo(RegistryException.Kind.CONFLICT);
            assertThat(refused.getMessage())
                    .isEqualTo(
                            "2 listeners are registered; this process can hold 2 (the open-file limit: a file per engine"
                                    + " connection; raise `ulimit -n` or lower --max-listeners)");
        }
    }

    private static long openFiles() throws java.io.IOException {
        try (var files = java.nio.file.Files.list(Path.of("/proc/self/fd"))) {
            return files.count();
        }
    }

    private static Registration registration(long id) {
        return new Registration(id, "tcp://127.0.0.1:" + (20000 + id), "m", "default", 4, 0, null, null);
    }
}
