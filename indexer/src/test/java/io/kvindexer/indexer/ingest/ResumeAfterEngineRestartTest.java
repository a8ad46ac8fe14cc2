package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica restored from its snapshot at watermark 9 resumes an engine (the simulator: a PUB, and a ROUTER that
 * answers a request from seq S with every buffered batch at or after S, then the end marker, as vLLM's does). When
 * the engine restarted while the replica was down, its replay holds nothing from seq 9 on: the replica must drop the
 * old process's blocks at once, not claim them exactly until the engine's next live batch, and pick up what the new
 * process published. When it did not restart, the resume recovers what came after 9 and drops nothing. Real
 * indexer (in process), real snapshot files, real sockets.
 */
class ResumeAfterEngineRestartTest {

    private static final long INSTANCE = 1;
    private static final Duration PATIENCE = Duration.ofSeconds(60);
    /** tokens per batch: 10 blocks of 4 */
    private static final int BATCH_TOKENS = 40;

    @RegisterExtension
    final TestResources open = new TestResources();

    @TempDir
    Path tmp;

    private IndexerApp replica() throws Exception {
        return open.add(IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = tmp.resolve("snapshots");
            c.snapshotInterval = Duration.ofHours(1);
        })));
    }

    private static int[] tokens(int batch) {
        return IntStream.range(batch * 1000, batch * 1000 + BATCH_TOKENS).toArray();
    }

    /** How many of the batch's 40 tokens (10 blocks) the index gives the engine. */
    private static int score(HttpTestClient http, int batch) {
        String body = "{\"model_name\":\"m\",\"token_ids\":"
                + Arrays.toString(tokens(batch)).replace(" ", "") + "}";
        return http.post("/query", body)
                .json()
                .path("scores")
                .path(Long.toString(INSTANCE))
                .path("0")
                .asInt();
    }

    /** Whether {@code /query} for the batch's tokens says the index is exact for the engine (it must match). */
    private static boolean queryExact(HttpTestClient http, int batch) {
        String body = "{\"model_name\":\"m\",\"token_ids\":"
                + Arrays.toString(tokens(batch)).replace(" ", "") + "}";
        return http.post("/query", body)
                .json()
                .path("instances")
                .path(Long.toString(INSTANCE))
                .path("exact")
                .asBoolean(false);
    }

    /** The start seqs of the replay requests after the first {@code before}. */
    private static List<Long> since(EngineSimulator sim, int before) {
        List<Long> starts = sim.replays().starts();
        return starts.subList(before, starts.size());
    }

    private static void store(EngineSimulator sim, int batch) throws Exception {
        sim.storeSequence(tokens(batch), 4).get(30, TimeUnit.SECONDS);
    }

    /**
     * A first replica indexes batches 0..9 (seqs 0..9, 100 blocks), writes its snapshot and goes away; how many
     * replay requests the engine had by then (a new registration's catch-up from 0).
     */
    private int indexedThenSnapshotted(EngineSimulator sim) throws Exception {
        try (IndexerApp first = IndexerApp.start(IndexerConfig.defaults().with(c -> {
                    c.snapshotDir = tmp.resolve("snapshots");
                    c.snapshotInterval = Duration.ofHours(1);
                }));
                HttpTestClient http = new HttpTestClient(first.baseUrl())) {
            http.registerEngine(sim);
            for (int b = 0; b < 10; b++) {
                store(sim, b);
            }
            await().atMost(PATIENCE)
                    .until(() -> first.workers().watermark(INSTANCE, 0).get() == 9);
            await().atMost(PATIENCE).until(() -> score(http, 9) == 40);
            first.snapshots().write();
        }
        return sim.replays().starts().size();
    }

    @Test
    void anEngineThatRestartedWhileTheReplicaWasDownLosesItsOldBlocksAtTheResume() throws Exception {
        EngineSimulator sim = open.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        int before = indexedThenSnapshotted(sim);
        sim.restart(); // a new process: cache and replay buffer empty, seq from 0
        store(sim, 20); // seq 0
        store(sim, 21); // seq 1; then the engine is idle

        IndexerApp second = replica();
        HttpTestClient http = open.add(new HttpTestClient(second.baseUrl()));
        await().atMost(PATIENCE).until(() -> !since(sim, before).isEmpty()); // the resume asked the engine
        // while the engine stays idle: no live batch comes to show the restart
        await().atMost(PATIENCE).untilAsserted(() -> {
            for (int b = 0; b < 10; b++) {
                assertThat(score(http, b))
                        .as("batch %d of the old process, which the engine no longer holds", b)
                        .isZero();
            }
            assertThat(score(http, 20)).as("seq 0 of the new process").isEqualTo(40);
            assertThat(score(http, 21)).as("seq 1 of the new process").isEqualTo(40);
        });
        await().atMost(PATIENCE).until(() -> second.workers().exact(INSTANCE));
        assertThat(queryExact(http, 20)).isTrue();
        assertThat(second.workers().watermark(INSTANCE, 0).get()).isEqualTo(1);
        assertThat(since(sim, before))
                .as("from the watermark itself, then from 0 once nothing came back (and once more after it)")
                .startsWith(9L, 0L)
                .doesNotContain(10L);
        assertThat(http.metric("dynamo_kvindexer_publisher_restarts_total")).isEqualTo(1.0);
    }

    /**
     * The engine restarted while the replica was down and published more batches than the old watermark (seqs 0..11
     * against 9): no seq went back, and its replay from 9 begins with its own seq 9. Only the digest of the batch the
     * first replica applied at 9, which the snapshot carries (version 4), shows that seq 9 came back with other bytes:
     * without it the replica kept the old process's 100 blocks as exact, applied the new process's 10 and 11 on top
     * of them, and never had its 0..9.
     */
    @Test
    void anEngineThatRestartedAndPublishedPastTheSnapshotsWatermarkIsToldByTheWatermarksBatch() throws Exception {
        EngineSimulator sim = open.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        int before = indexedThenSnapshotted(sim);
        sim.restart(); // a new process: cache and replay buffer empty, seq from 0
        for (int b = 20; b < 32; b++) {
            store(sim, b); // seqs 0..11, past the saved watermark 9; then the engine is idle
        }

        IndexerApp second = replica();
        HttpTestClient http = open.add(new HttpTestClient(second.baseUrl()));
        await().atMost(PATIENCE).until(() -> !since(sim, before).isEmpty()); // the resume asked the engine
        await().atMost(PATIENCE).untilAsserted(() -> {
            for (int b = 0; b < 10; b++) {
                assertThat(score(http, b))
                        .as("batch %d of the old process, which the engine no longer holds", b)
                        .isZero();
            }
            for (int b = 20; b < 32; b++) {
                assertThat(score(http, b))
                        .as("seq %d of the new process", b - 20)
                        .isEqualTo(40);
            }
        });
        await().atMost(PATIENCE).until(() -> second.workers().exact(INSTANCE));
        assertThat(second.workers().watermark(INSTANCE, 0).get()).isEqualTo(11);
        assertThat(since(sim, before))
                .as("from the watermark itself, whose batch came back another, then from 0")
                .startsWith(9L, 0L);
        assertThat(http.metric("dynamo_kvindexer_publisher_restarts_total")).isEqualTo(1.0);
    }

    /**
     * A replica that recovers from a peer's binary {@code /dump} gets each registration's watermark with the batch the
     * peer applied there (version 4), so its first replay can show an engine restart as the peer's own would.
     */
    @Test
    void aPeersDumpCarriesTheBatchAtEachWatermark() throws Exception {
        EngineSimulator sim = open.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        IndexerApp peer = replica();
        HttpTestClient peerHttp = open.add(new HttpTestClient(peer.baseUrl()));
        peerHttp.registerEngine(sim);
        for (int b = 0; b < 3; b++) {
            store(sim, b);
        }
        await().atMost(PATIENCE)
                .until(() -> peer.workers().watermark(INSTANCE, 0).get() == 2);
        SequenceWatermark.LastBatch known =
                peer.workers().watermark(INSTANCE, 0).watermarkBatch();
        assertThat(known).isNotNull();

        IndexerApp second = open.add(IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.peers = List.of(peer.baseUrl());
            c.recoveryDelay = Duration.ZERO;
        })));
        await().atMost(PATIENCE).until(() -> second.workers().watermark(INSTANCE, 0) != null);
        assertThat(second.workers().watermark(INSTANCE, 0).watermarkBatch())
                .as("the peer's watermark with the digest and timestamp of its batch")
                .isEqualTo(known);
    }

    @Test
    void anEngineThatKeptRunningIsResumedFromTheWatermarkAndNothingIsDropped() throws Exception {
        EngineSimulator sim = open.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        int before = indexedThenSnapshotted(sim);
        store(sim, 10); // seq 10, nobody listens
        store(sim, 11); // seq 11; then the engine is idle

        IndexerApp second = replica();
        HttpTestClient http = open.add(new HttpTestClient(second.baseUrl()));
        await().atMost(PATIENCE)
                .until(() -> second.workers().watermark(INSTANCE, 0) != null
                        && second.workers().watermark(INSTANCE, 0).get() == 11);
        await().atMost(PATIENCE).until(() -> second.workers().exact(INSTANCE));

        assertThat(queryExact(http, 0)).isTrue();
        for (int b = 0; b < 12; b++) {
            assertThat(score(http, b)).as("batch %d", b).isEqualTo(40);
        }
        assertThat(since(sim, before))
                .as("from the watermark itself (then once more after 11), never from 0")
                .startsWith(9L)
                .allMatch(seq -> seq >= 9L);
        assertThat(http.metric("dynamo_kvindexer_publisher_restarts_total")).isEqualTo(0.0);
        assertThat(http.metric("dynamo_kvindexer_unrecoverable_gaps_total")).isEqualTo(0.0);
    }
}
