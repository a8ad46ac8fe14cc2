package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.SimulatorProcess;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code --unregister-grace} with the project's engine simulator in its own process, which announces its shared
 * system prompts once and then stores every request under them: a reference replica that never unregisters is the
 * ground truth. A worker unregistered and registered again at the same endpoint within the grace period, its engine
 * running on, answers exactly what the reference holds (blocks stored under the old hot prefixes after it came back
 * included), where Dynamo's behaviour (no grace) loses them; an engine that restarted meanwhile does not get its old
 * blocks back.
 */
class UnregisterGraceTest {

    private static int freePort() throws IOException {
        try (ServerSocket probe = new ServerSocket(0)) {
            return probe.getLocalPort();
        }
    }

    /** The simulator process: {@code rate} requests/s over 4 system prompts, a 512-block cache. */
    private static Process engine(String endpoint, String replay, long seed, long requests, int rate)
            throws IOException {
        return SimulatorProcess.start(List.of("-Xmx128m"), endpoint, replay, engineOptions(seed, requests, rate));
    }

    private static String[] engineOptions(long seed, long requests, int rate, String... more) {
        List<String> options = new ArrayList<>(List.of(
                "--block-size",
                String.valueOf(FaultHarness.BLOCK),
                "--rate",
                String.valueOf(rate),
                "--capacity-blocks",
                "512",
                "--prefixes",
                "4",
                "--requests",
                String.valueOf(requests),
                "--seed",
                String.valueOf(seed)));
        options.addAll(List.of(more));
        return options.toArray(String[]::new);
    }

    /** The batches a simulator published in all, from its "done" line; -1 before it printed one. */
    private static long publishedBatches(Path output) throws IOException {
        return Files.readAllLines(output).stream()
                .filter(l -> l.startsWith("done: "))
                .mapToLong(l -> Long.parseLong(l.replaceAll(".*, (\\d+) batches$", "$1")))
                .findFirst()
                .orElse(-1);
    }

    private static void register(HttpTestClient http, String endpoint, String replay) {
        http.post(
                        "/register",
                        "{\"instance_id\":1,\"endpoint\":\"" + endpoint + "\",\"replay_endpoint\":\"" + replay
                                + "\",\"model_name\":\"" + FaultHarness.MODEL + "\",\"block_size\":"
                                + FaultHarness.BLOCK
                                + "}")
                .assertStatus(201);
    }

    private static void unregister(HttpTestClient http) {
        http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"" + FaultHarness.MODEL + "\"}")
                .assertStatus(200);
    }

    private static long batchesApplied(HttpTestClient http) {
        return http.get("/metrics")
                .body()
                .lines()
                .filter(l -> l.startsWith("dynamo_kvindexer_batches_applied_total "))
                .mapToLong(l -> (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
                .sum();
    }

    private static IndexerApp withGrace(Duration grace) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> c.unregisterGrace = grace));
    }

    @Test
    void aComebackWithinTheGraceAnswersTheWholeChainAgain() throws Exception {
        List<Process> engines = new ArrayList<>();
        try (IndexerApp reference = withGrace(Duration.ZERO);
                IndexerApp graced = withGrace(Duration.ofMinutes(2));
                HttpTestClient ref = new HttpTestClient(reference.baseUrl());
                HttpTestClient g = new HttpTestClient(graced.baseUrl())) {
            // chosen once both replicas listen: a port picked before could be given to one of them (it happened)
            String endpoint = "tcp://127.0.0.1:" + freePort();
            String replay = "tcp://127.0.0.1:" + freePort();
            engines.add(engine(endpoint, replay, 42, 6_000, 1_000)); // 6 s of requests once it runs
            for (HttpTestClient http : List.of(ref, g)) {
                register(http, endpoint, replay);
            }
            await().atMost(Duration.ofSeconds(60))
                    .until(() -> FaultHarness.dumpMemberships(g).size() > 300);
            Set<String> before = FaultHarness.dumpMemberships(g);
            unregister(g);
            assertThat(FaultHarness.dumpMemberships(g)).as("hidden at once").isEmpty();
            assertThat(g.get("/workers").json()).isEmpty();
            Thread.sleep(700); // the engine stores and evicts meanwhile
            register(g, endpoint, replay);
            assertThat(engines.getFirst().isAlive())
                    .as("the engine still runs after the comeback")
                    .isTrue();
            assertThat(engines.getFirst().waitFor(60, TimeUnit.SECONDS)).isTrue();
            await().atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(200))
                    .untilAsserted(() ->
                            assertThat(FaultHarness.dumpMemberships(g)).isEqualTo(FaultHarness.dumpMemberships(ref)));
            Set<String> truth = FaultHarness.dumpMemberships(ref);
            Set<String> storedAfter = new HashSet<>(truth);
            storedAfter.removeAll(before);
            assertThat(storedAfter).as("blocks stored after the comeback").isNotEmpty();
            // the simulator's shared system prompts: 4 blocks of 16 tokens, 1000 * (prefix + 1) + i
            int refTokens = 0;
            for (int prefix = 0; prefix < 4; prefix++) {
                StringBuilder tokens = new StringBuilder();
                for (int i = 0; i < 4 * FaultHarness.BLOCK; i++) {
                    tokens.append(i == 0 ? "" : ",").append(1000 * (prefix + 1) + i);
                }
                String q = "{\"model_name\":\"" + FaultHarness.MODEL + "\",\"token_ids\":[" + tokens + "]}";
                int expected = ref.post("/query", q).json().at("/scores/1/0").asInt();
                assertThat(g.post("/query", q).json().at("/scores/1/0").asInt())
                        .as("hot prefix %d", prefix)
                        .isEqualTo(expected);
                refTokens += expected;
            }
            assertThat(refTokens).isPositive();
        } finally {
            engines.forEach(Process::destroyForcibly);
        }
    }

    @Test
    void anEngineRestartedDuringTheGraceDoesNotGetItsOldBlocksBack() throws Exception {
        List<Process> engines = new ArrayList<>();
        try (IndexerApp graced = withGrace(Duration.ofMinutes(2));
                IndexerApp reference = withGrace(Duration.ZERO);
                HttpTestClient g = new HttpTestClient(graced.baseUrl());
                HttpTestClient ref = new HttpTestClient(reference.baseUrl())) {
            // chosen once both replicas listen: a port picked before could be given to one of them (it happened)
            String endpoint = "tcp://127.0.0.1:" + freePort();
            String replay = "tcp://127.0.0.1:" + freePort();
            engines.add(engine(endpoint, replay, 1, 0, 1_000));
            register(g, endpoint, replay);
            // a restart shows as a seq below the kept watermark: let the old engine get well past what the new one
            // will publish in all (a restarted engine that got past it before its comeback looks like the same one)
            await().atMost(Duration.ofSeconds(60)).until(() -> batchesApplied(g) > 2_000);
            Set<String> old = FaultHarness.dumpMemberships(g);
            unregister(g);
            engines.getFirst().destroyForcibly();
            assertThat(engines.getFirst().waitFor(30, TimeUnit.SECONDS)).isTrue();
            // the same address, a new process whose seq starts over; the reference follows it from its start. It
            // stays up once done, as an engine does: a replica that connected late (a loaded machine) replays
            Path output = Files.createTempFile("unregister-grace-engine", ".log");
            try {
                engines.add(SimulatorProcess.start(
                        List.of("-Xmx128m"),
                        ProcessBuilder.Redirect.to(output.toFile()),
                        endpoint,
                        replay,
                        engineOptions(2, 1_500, 1_000, "--then-idle")));
                register(ref, endpoint, replay);
                register(g, endpoint, replay);
                long published =
                        await().atMost(Duration.ofSeconds(60)).until(() -> publishedBatches(output), n -> n >= 0);
                await().atMost(Duration.ofSeconds(30))
                        .pollInterval(Duration.ofMillis(200))
                        .untilAsserted(() -> {
                            assertThat(batchesApplied(ref))
                                    .as("the reference has all")
                                    .isEqualTo(published);
                            assertThat(FaultHarness.dumpMemberships(g)).isEqualTo(FaultHarness.dumpMemberships(ref));
                        });
            } finally {
                Files.deleteIfExists(output);
            }
            Set<String> stale = new HashSet<>(old);
            stale.removeAll(FaultHarness.dumpMemberships(ref));
            assertThat(stale).as("the old engine's own blocks exist").isNotEmpty();
        } finally {
            engines.forEach(Process::destroyForcibly);
        }
    }
}
