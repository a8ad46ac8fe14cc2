package io.kvindexer.indexer.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import io.helidon.webserver.WebServer;
import io.helidon.webserver.testing.junit5.ServerTest;
import io.kvindexer.indexer.http.IndexerHarness;
import io.kvindexer.indexer.http.IndexerRoutes;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Garbage ZMQ messages (wrong frame counts, bad seq frames, hostile payloads under the next valid seq) interleaved
 * with real batches into a live listener: the listener stays active, counts what it skipped, and the index still
 * ends exactly equal to the engine's ground truth.
 */
@ServerTest
@IndexerRoutes
class LiveListenerGarbageFuzzTest {

    @Test
    void garbageFramesNeverKillTheListener(WebServer server) throws Exception {
        int garbage = ReliabilityReport.scaled(3_000, 20);
        try (FaultHarness h = new FaultHarness(IndexerHarness.baseUrl(server))) {
            FaultHarness.Engine e = h.addEngine(1, EngineSimulator.Options.defaults(), 300, true);
            Random random = new Random(42);
            int corrupted = 0;
            var last = e.sim.sendRaw(new byte[0]);
            for (int i = 0; i < garbage; i++) {
                byte[][] message = garbageMessage(random, e.sim.nextSeq());
                last = e.sim.sendRaw(message);
                if (message.length == 3 && message[1].length == 8) {
                    // a corrupted batch used up its seq: the engine never sends that seq again (reusing it
                    // would look like an engine restart, which drops the worker and replays from 0)
                    e.sim.skip(1);
                    corrupted++;
                }
                if (i % 10 == 9) {
                    e.drive(1, 0);
                }
            }
            last.get(60, TimeUnit.SECONDS);
            e.liveProbe();
            long ms = h.awaitConverged(Duration.ofSeconds(90));
            h.assertQueriesMatchGroundTruth(100, 9);
            long skipped = h.metric("dynamo_kvindexer_malformed_frames_total")
                    + h.metric("dynamo_kvindexer_decode_errors_total");
            assertThat(skipped).isPositive();
            assertThat(h.http.get("/workers")
                            .json()
                            .get(0)
                            .at("/listeners/0/status")
                            .asText())
                    .isEqualTo("active");
            ReliabilityReport.record(h.convergedRow(
                    "listener-garbage",
                    "hostile ZMQ messages into a " + "live listener",
                    "1 engine, 1 real batch per 10 garbage messages",
                    garbage,
                    ms,
                    skipped + " counted in malformed_frames + decode_errors; " + corrupted
                            + " garbage messages were corrupted payloads under a real seq (arrived, not replayed);"
                            + " listener active; exact"));
        }
    }

    private static byte[][] garbageMessage(Random random, long nextSeq) throws Exception {
        switch (random.nextInt(4)) {
            case 0 -> { // wrong frame count
                int n = random.nextBoolean() ? 1 + random.nextInt(2) : 4 + random.nextInt(3);
                byte[][] frames = new byte[n][];
                for (int i = 0; i < n; i++) {
                    frames[i] = new byte[random.nextInt(20)];
                    random.nextBytes(frames[i]);
                }
                return frames;
            }
            case 1 -> { // seq frame of the wrong length
                int len = random.nextInt(16);
                byte[] seq = new byte[len == 8 ? 9 : len];
                random.nextBytes(seq);
                return new byte[][] {new byte[0], seq, new byte[] {(byte) 0x90}};
            }
            default -> { // the next seq with a hostile payload: not applied, so the real batch with it still is
                byte[] seq = ByteBuffer.allocate(8).putLong(nextSeq).array();
                byte[] payload = io.kvindexer.indexer.event.HostileInputs.rejected(random);
                return new byte[][] {new byte[0], seq, payload};
            }
        }
    }
}
