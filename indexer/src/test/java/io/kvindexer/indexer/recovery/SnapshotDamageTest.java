package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerApp;
import io.kvindexer.indexer.IndexerConfig;
import io.kvindexer.indexer.dump.BinaryDump;
import io.kvindexer.indexer.dump.SavedRegistration;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.snapshot.SnapshotFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A damaged snapshot never hurts: cut at every offset, every single bit flipped, a newer format version: the
 * loader logs and counts it, falls back to the previous snapshot (or to nothing), and installs nothing of it. A
 * directory that cannot be written is counted and the replica runs on.
 */
class SnapshotDamageTest {

    @TempDir
    Path tmp;

    /** A replica that snapshots into {@code dir} every {@code interval}. */
    private static IndexerApp snapshotting(Path dir, Duration interval) throws Exception {
        return IndexerApp.start(IndexerConfig.defaults().with(c -> {
            c.snapshotDir = dir;
            c.snapshotInterval = interval;
        }));
    }

    /** A small real snapshot: one engine registered with a replay endpoint and two sequences stored. */
    private byte[] smallSnapshot(Path dir) throws Exception {
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp app = snapshotting(dir, Duration.ofHours(1));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            Replicas.awaitReady(http);
            http.registerEngine(sim);
            sim.storeSequence(new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4).get();
            await().atMost(Duration.ofSeconds(30)).until(() -> Replicas.score(http) == 8);
            Path file = app.snapshots().write().file();
            return Files.readAllBytes(file);
        }
    }

    /** {@code dir} holds {@code older} as snapshot 1 and {@code newer} as snapshot 2. */
    private static void lay(Path dir, byte[] older, byte[] newer) throws IOException {
        Files.createDirectories(dir);
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Files.delete(p);
            }
        }
        if (older != null) {
            Files.write(dir.resolve("snapshot-0000000000000000001.kvix"), older);
        }
        Files.write(dir.resolve("snapshot-0000000000000000002.kvix"), newer);
    }

    @Test
    void everyTruncationAndBitFlipFallsBackToThePreviousSnapshot() throws Exception {
        byte[] good = smallSnapshot(tmp.resolve("source"));
        assertThat(good.length).isBetween(60, 2_000);
        List<byte[]> damaged = new ArrayList<>();
        for (int cut = 0; cut < good.length; cut++) {
            damaged.add(Arrays.copyOf(good, cut));
        }
        for (int bit = 0; bit < good.length * 8; bit++) {
            byte[] bad = good.clone();
            bad[bit / 8] ^= (byte) (1 << (bit % 8));
            damaged.add(bad);
        }
        byte[] newer = good.clone();
        newer[9] = (byte) (BinaryDump.VERSION_WITH_SNAPSHOT_WATERMARKS + 1); // a format version from the future
        damaged.add(newer);

        Path dir = tmp.resolve("damaged");
        try (Indexers indexers = new Indexers(IndexOptions.defaults())) {
            Recovered fromGood =
                    SnapshotRecovery.load(tmp.resolve("source"), indexers, Duration.ofSeconds(30), e -> {});
            assertThat(fromGood).isNotNull();
            List<SavedRegistration> registrations = fromGood.registrations();
            assertThat(registrations).hasSize(1);
            assertThat(registrations.getFirst().replayEndpoint()).isNotNull();
            for (int i = 0; i < damaged.size(); i++) {
                lay(dir, good, damaged.get(i));
                List<String> events = new ArrayList<>();
                Recovered r = SnapshotRecovery.load(dir, indexers, Duration.ofSeconds(30), events::add);
                assertThat(r).as("case %d", i).isNotNull();
                assertThat(r.source()).as("case %d", i).endsWith("snapshot-0000000000000000001.kvix");
                assertThat(r.registrations()).isEqualTo(registrations);
                assertThat(events).as("case %d", i).containsExactly("damaged", "loaded");
                assertThat(indexers.all()).as("nothing installed").isEmpty();
            }
            // with no previous snapshot, a damaged one gives nothing at all
            for (int i = 0; i < damaged.size(); i += 97) {
                lay(dir, null, damaged.get(i));
                List<String> events = new ArrayList<>();
                assertThat(SnapshotRecovery.load(dir, indexers, Duration.ofSeconds(30), events::add))
                        .isNull();
                assertThat(events).containsExactly("damaged");
            }
            // what did verify installs exactly what was saved
            fromGood.install().run();
            indexers.flushAll().get();
            assertThat(BinaryRecoveryTest.content(indexers)).hasSize(1);
            assertThat(BinaryRecoveryTest.content(indexers).values().iterator().next())
                    .hasSize(2);
        }
    }

    @Test
    void aDirectoryThatCannotBeWrittenIsCountedAndTheReplicaRunsOn() throws Exception {
        Path file = Files.writeString(tmp.resolve("not-a-directory"), "x");
        Path dir = file.resolve("snapshots"); // under a regular file: cannot be created, even by root
        try (IndexerApp app = snapshotting(dir, Duration.ofMillis(50));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            Replicas.awaitReady(http);
            assertThatThrownBy(() -> app.snapshots().write()).isInstanceOf(IOException.class);
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> http.get("/metrics")
                            .body()
                            .contains("dynamo_kvindexer_snapshots_total{event=\"write_failed\"}"));
            assertThat(http.get("/health").status()).isEqualTo(200);
            assertThat(http.get("/workers").status()).isEqualTo(200);
        }
    }

    @Test
    void theNewestGoodSnapshotWinsAndOnlyTwoAreKept() throws Exception {
        Path dir = tmp.resolve("kept");
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults());
                IndexerApp app = snapshotting(dir, Duration.ofHours(1));
                HttpTestClient http = new HttpTestClient(app.baseUrl())) {
            Replicas.awaitReady(http);
            app.snapshots().write();
            http.post(
                            "/register",
                            "{\"instance_id\":7,\"endpoint\":\"" + sim.endpoint() + "\",\"model_name\":\"m\","
                                    + "\"block_size\":4}")
                    .assertStatus(201);
            // the registration is written about a second later by itself (snapshot 2)
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> Files.exists(dir.resolve("snapshot-0000000000000000002.kvix")));
            app.snapshots().write();
            Path newest = app.snapshots().write().file();
            try (var files = Files.list(dir)) {
                assertThat(files.map(p -> p.getFileName().toString())
                                .filter(name -> !name.equals(SnapshotFiles.LOCK))
                                .sorted()
                                .toList())
                        .containsExactly("snapshot-0000000000000000003.kvix", "snapshot-0000000000000000004.kvix");
            }
            try (Indexers indexers = new Indexers(IndexOptions.defaults())) {
                Recovered r = SnapshotRecovery.load(dir, indexers, Duration.ofSeconds(30), e -> {});
                assertThat(r.source()).isEqualTo(newest.toString());
                assertThat(r.registrations()).hasSize(1);
            }
        }
    }
}
