package io.kvindexer.indexer.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerProcess;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The blocks {@code --unregister-grace} keeps for an unregistered worker survive a restart from the snapshot, real
 * processes: the worker coming back at the same endpoint after the restart gets them back, and the batches its
 * engine published meanwhile are replayed from the saved watermark. The grace period itself runs on across the
 * restart: it ends when it would have without one, not a grace period after the restart. The methods share nothing
 * (each its own simulator, replicas and directory) and run two at once: the one that waits out a 15 s grace beside the
 * other two; its restarted replica, whose start may coincide with one of theirs, was Ready 13 s before its deadline
 * under a load average of 12 on 2 cores.
 */
class UnregisterGraceRestartTest {

    private static final int[] FIRST = {1, 2, 3, 4, 5, 6, 7, 8};
    private static final int[] WHILE_AWAY = IntStream.rangeClosed(101, 108).toArray();
    private static final String REATTACHED = "dynamo_kvindexer_unregister_grace_total{outcome=\"reattached\"}";
    private static final String EXPIRED = "dynamo_kvindexer_unregister_grace_total{outcome=\"expired\"}";

    @TempDir
    Path tmp;

    private static int score(HttpTestClient http, int[] tokens) {
        StringBuilder ids = new StringBuilder();
        for (int t : tokens) {
            ids.append(ids.isEmpty() ? "" : ",").append(t);
        }
        return http.post("/query", "{\"model_name\":\"m\",\"token_ids\":[" + ids + "]}")
                .json()
                .at("/scores/1/0")
                .asInt(0);
    }

    private static void awaitReady(HttpTestClient http) {
        await().atMost(Duration.ofSeconds(60)).until(() -> http.get("/ready").status() == 200);
    }

    private static void unregister(HttpTestClient http) {
        http.post("/unregister", "{\"instance_id\":1,\"model_name\":\"m\"}").assertStatus(200);
    }

    /** Registers the engine, stores {@link #FIRST} and unregisters: its 2 blocks are detached. */
    private static void storeThenUnregister(EngineSimulator sim, HttpTestClient http) throws Exception {
        http.registerEngine(sim);
        sim.storeSequence(FIRST, 4).get(30, TimeUnit.SECONDS);
        await().atMost(Duration.ofSeconds(30)).until(() -> score(http, FIRST) == 8);
        unregister(http);
        assertThat(score(http, FIRST)).as("hidden at once").isZero();
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aWorkerBackAfterARestartWithinTheGraceGetsItsBlocksAndItsGapReplayed() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerProcess first = IndexerProcess.snapshotting(dir, "--unregister-grace", "5m");
                    HttpTestClient http = new HttpTestClient(first.url())) {
                awaitReady(http);
                storeThenUnregister(sim, http);
                assertThat(first.terminate()).isTrue(); // the last snapshot, at shutdown
            }
            Path grace;
            try (var files = Files.list(dir)) {
                grace = files.filter(p -> p.getFileName().toString().endsWith(".grace"))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("no detached blocks beside the snapshot"));
            }
            try (var in = Files.newInputStream(grace)) {
                assertThat(GraceFile.read(in))
                        .singleElement()
                        .extracting(w -> w.registration().watermarkBatch())
                        .as("the batch at its watermark, to tell an engine restart by on its comeback")
                        .isNotNull();
            }
            sim.storeSequence(WHILE_AWAY, 4).get(30, TimeUnit.SECONDS); // published while nobody listens

            try (IndexerProcess second = IndexerProcess.snapshotting(dir, "--unregister-grace", "5m");
                    HttpTestClient http = new HttpTestClient(second.url())) {
                awaitReady(http);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> second.output().contains("kept detached again after the restart"));
                assertThat(score(http, FIRST))
                        .as("still hidden: nobody is registered")
                        .isZero();

                http.registerEngine(sim); // the same endpoint, its stream continuing
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    assertThat(score(http, FIRST))
                            .as("the detached blocks, back")
                            .isEqualTo(8);
                    assertThat(score(http, WHILE_AWAY))
                            .as("what the engine published meanwhile, replayed from the saved watermark")
                            .isEqualTo(8);
                });
                assertThat(http.metric(REATTACHED)).isEqualTo(1.0);
            }
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void theGracePeriodEndsWhenItWouldHaveWithoutTheRestart() throws Exception {
        Path dir = tmp.resolve("snapshots");
        Duration grace = Duration.ofSeconds(15);
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            long unregisteredAt;
            long stoppedAt;
            try (IndexerProcess first = IndexerProcess.snapshotting(dir, "--unregister-grace", "15s");
                    HttpTestClient http = new HttpTestClient(first.url())) {
                awaitReady(http);
                storeThenUnregister(sim, http);
                unregisteredAt = System.nanoTime();
                assertThat(first.terminate()).isTrue();
                stoppedAt = System.nanoTime();
            }
            // down for 4 s at least, restarted 5 s into the grace at the earliest
            sleepUntil(Math.max(unregisteredAt + TimeUnit.SECONDS.toNanos(5), stoppedAt + TimeUnit.SECONDS.toNanos(4)));
            long restartedAt = System.nanoTime();
            try (IndexerProcess second = IndexerProcess.snapshotting(dir, "--unregister-grace", "15s");
                    HttpTestClient http = new HttpTestClient(second.url())) {
                awaitReady(http);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> second.output().contains("kept detached again after the restart"));
                // each scrape expires what outlived its grace, so it shows 15 s after the unregister; a grace started
                // over at the restart, or one that did not count the time the replica was down, ends after this
                // deadline whatever the timing
                long deadline = unregisteredAt + grace.toNanos() + (restartedAt - stoppedAt);
                Duration left = Duration.ofNanos(deadline - System.nanoTime());
                assertThat(left).as("the replica was ready before the deadline").isPositive();
                await().atMost(left).until(() -> http.metric(EXPIRED) == 1.0);
                http.registerEngine(sim);
                assertThat(http.metric(EXPIRED)).as("its grace had ended").isEqualTo(1.0);
                assertThat(http.metric(REATTACHED)).isZero();
                assertThat(score(http, FIRST)).isZero();
            }
        }
    }

    @Test
    @Execution(ExecutionMode.CONCURRENT)
    void aDamagedGraceFileCostsTheDetachedBlocksNotTheSnapshot() throws Exception {
        Path dir = tmp.resolve("snapshots");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                EngineSimulator stays = EngineSimulator.start(EngineSimulator.Options.defaults())) {
            try (IndexerProcess first = IndexerProcess.snapshotting(dir, "--unregister-grace", "5m");
                    HttpTestClient http = new HttpTestClient(first.url())) {
                awaitReady(http);
                storeThenUnregister(sim, http);
                http.post( // instance 2: registered when the snapshot is written
                                "/register",
                                "{\"instance_id\":2,\"endpoint\":\"" + stays.endpoint()
                                        + "\",\"model_name\":\"m\",\"block_size\":4}")
                        .assertStatus(201);
                assertThat(first.terminate()).isTrue();
            }
            // the newest snapshot's, the one the restart loads: the one before it (kept too) may have a grace file
            // of its own, and damaging that one proved nothing and left the wanted warning out
            Path grace =
                    SnapshotFiles.graceOf(new SnapshotFiles(dir).newestFirst().getFirst());
            assertThat(grace).as("the newest snapshot's grace file").exists();
            byte[] bytes = Files.readAllBytes(grace);
            Files.write(grace, java.util.Arrays.copyOf(bytes, bytes.length - 3));

            try (IndexerProcess second = IndexerProcess.snapshotting(dir, "--unregister-grace", "5m");
                    HttpTestClient http = new HttpTestClient(second.url())) {
                awaitReady(http);
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> second.output().contains("is unusable")
                                && second.output().contains("are not restored"));
                assertThat(http.get("/workers").json().findValuesAsText("instance_id"))
                        .as("the snapshot itself loaded: its registration is back")
                        .containsExactly("2");
            }
        }
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left = nanoTime - System.nanoTime();
        if (left > 0) {
            TimeUnit.NANOSECONDS.sleep(left);
        }
    }
}
