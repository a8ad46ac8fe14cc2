package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvindexer.indexer.IndexerProcess;
import io.kvindexer.indexer.http.HttpTestClient;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A single replica (a child JVM) with {@code --snapshot-dir} is SIGKILLed while three engines store and evict;
 * they go on while it is down; it is started again with no peer. At its first {@code /ready} 200 every registration
 * is back, nobody registers anything, and once the replays of what it missed are done its {@code /dump} equals
 * what the engines hold.
 */
class SnapshotRestartTest {

    private static final int ENGINES = 3;

    @TempDir
    Path dir;

    private IndexerProcess start() throws Exception {
        return IndexerProcess.start(
                List.of("-Xmx512m"),
                "--port",
                "0",
                "--host",
                "127.0.0.1",
                "--snapshot-dir",
                dir.toString(),
                "--snapshot-interval",
                "300ms");
    }

    @Test
    void killedReplicaComesBackFromItsSnapshotWithItsRegistrationsAndCatchesUpByReplay() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> load = new ArrayList<>();
        IndexerProcess replica = start();
        try (FaultHarness h = new FaultHarness(replica.url())) {
            for (int id = 1; id <= ENGINES; id++) {
                h.addEngine(id, EngineSimulator.Options.defaults(), 300, true);
            }
            Set<String> registered = workers(h.http);
            assertThat(registered).hasSize(ENGINES);
            load.addAll(h.driveInBackground(stop));
            await().atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> h.metric("dynamo_kvindexer_snapshots_total") >= 3);
            assertThat(replica.kill()).isTrue();
            Thread.sleep(500); // the engines store and evict while no replica listens
            replica = start();
            try (HttpTestClient http = new HttpTestClient(replica.url())) {
                await().atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(5))
                        .until(() -> http.get("/ready").status() == 200);
                assertThat(workers(http))
                        .as("registrations at the first /ready 200")
                        .isEqualTo(registered);
                Thread.sleep(500);
                stop.set(true);
                for (Thread t : load) {
                    t.join();
                }
                for (FaultHarness.Engine e : h.engines) {
                    e.liveProbe();
                }
                await().atMost(Duration.ofSeconds(60))
                        .pollInterval(Duration.ofMillis(100))
                        .untilAsserted(() ->
                                assertThat(FaultHarness.dumpMemberships(http)).isEqualTo(h.groundTruth()));
                FaultHarness after = new FaultHarness(replica.url());
                assertThat(after.metric("dynamo_kvindexer_snapshots_total{event=\"loaded\"}"))
                        .isEqualTo(1);
                assertThat(after.metric("dynamo_kvindexer_replayed_batches_total"))
                        .as("what was published while it was down came by replay")
                        .isPositive();
                assertThat(after.metric("dynamo_kvindexer_unrecoverable_gaps_total"))
                        .isZero();
                after.close();
            }
        } finally {
            stop.set(true);
            for (Thread t : load) {
                t.join();
            }
            replica.close();
        }
    }

    /** {@code instance:rank endpoint} of every listener {@code /workers} lists. */
    private static Set<String> workers(HttpTestClient http) {
        Set<String> out = new TreeSet<>();
        for (JsonNode w : http.get("/workers").json()) {
            w.path("listeners")
                    .properties()
                    .forEach(l -> out.add(w.path("instance_id").asText() + ":" + l.getKey() + " "
                            + l.getValue().path("endpoint").asText()));
        }
        return out;
    }
}
