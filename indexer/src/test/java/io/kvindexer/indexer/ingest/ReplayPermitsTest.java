package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.IndexerCli;
import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** At most N replays at once per process: three listeners that all need one, two permits. */
class ReplayPermitsTest {

    @RegisterExtension
    final TestResources open = new TestResources();

    @Test
    void theThirdReplayWaitsUntilAPermitIsFree() {
        ReplayPermits permits = new ReplayPermits(2);
        List<EngineSimulator> sims = new ArrayList<>();
        List<SequenceWatermark> watermarks = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            EngineSimulator sim = EngineSimulator.Options.builder().start();
            open.add(sim);
            sims.add(sim);
            SequenceWatermark watermark = new SequenceWatermark();
            watermarks.add(watermark);
            EngineListener listener = new EngineListener(
                    new ListenerSpec(i + 1, 0, sim.endpoint(), sim.replayEndpoint()),
                    watermark,
                    new RecordingSink(),
                    ReadyGate.open(),
                    ListenerOptions.defaults().with(o -> {
                        o.replayPermits = permits;
                        o.replayTimeout = Duration.ofSeconds(30);
                    }));
            open.add(listener);
            listener.start();
            Subscriptions.await(listener, sim, 1);
            sim.deferReplays(true);
        }
        for (EngineSimulator sim : sims) {
            sim.dropLive(1);
            sim.storeSequence(IntStream.range(0, 4).toArray(), 4); // seq 0, lost live
            sim.storeSequence(IntStream.range(10, 14).toArray(), 4).join(); // seq 1: replay from 0
        }

        await().atMost(Duration.ofSeconds(30)).until(() -> waiting(sims) == 2);
        assertThat(permits.inUse()).isEqualTo(2);
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> waiting(sims) == 2);

        for (EngineSimulator sim : sims) {
            sim.deferReplays(false);
            sim.releaseDeferredReplays().join();
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> watermarks.stream().allMatch(w -> w.get() == 1));
        assertThat(sims).as("each engine asked").allMatch(s -> s.replays().requests() >= 1);
        assertThat(permits.inUse()).isZero();
    }

    @Test
    void theLimitIsAFlag() throws Exception {
        assertThat(IndexerCli.parse(new String[0], Map.of()).config().limits().maxConcurrentReplays())
                .isEqualTo(ReplayPermits.DEFAULT)
                .isEqualTo(8);
        assertThat(IndexerCli.parse(new String[] {"--max-concurrent-replays", "3"}, Map.of())
                        .config()
                        .limits()
                        .maxConcurrentReplays())
                .isEqualTo(3);
    }

    /**
     * Engines holding a replay request: a replay running (a handshake retry can leave a copy of its request at the
     * engine, so count engines, not requests).
     */
    private static long waiting(List<EngineSimulator> sims) {
        return sims.stream().filter(s -> s.replays().deferredRequests() > 0).count();
    }
}
