package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.PrefixCacheEngine;
import io.kvindexer.indexer.sim.SimEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * A realistic stream (16-token blocks, shared prompts, LRU evictions) end to end, then a gap of thousands of
 * batches that comes back by replay in bounded chunks: the listener ends in the engine's exact state.
 */
class LongGapReplayTest {

    @Test
    void aLongGapIsReplayedInChunksToTheExactEngineState() {
        int batches = 3_000;
        RecordingSink sink = new RecordingSink();
        CountingMetrics metrics = new CountingMetrics();
        try (EngineSimulator sim =
                EngineSimulator.Options.builder().bufferSteps(batches + 10).start()) {
            SequenceWatermark watermark = new SequenceWatermark();
            try (EngineListener listener = new EngineListener(
                    new ListenerSpec(1, 0, sim.endpoint(), sim.replayEndpoint()),
                    watermark,
                    sink,
                    ReadyGate.open(),
                    metrics.options().with(o -> {
                        o.replayTimeout = Duration.ofSeconds(30);
                        o.replayChunk = 500;
                    }))) {
                listener.start();
                Subscriptions.awaitActive(listener, sim, Duration.ofSeconds(60));
                List<List<SimEvent>> work = workload(2 * batches);

                for (int i = 0; i < batches; i++) {
                    sim.publish(work.get(i));
                }
                await().atMost(Duration.ofSeconds(120)).until(() -> watermark.get() == batches - 1);
                assertThat(sink.asGroundTruth(1)).isEqualTo(sim.groundTruth());

                sim.dropLive(batches);
                for (int i = batches; i < 2 * batches; i++) {
                    sim.publish(work.get(i));
                }
                sim.publish(List.of(EngineSimulator.cleared(), work.get(0).get(0)))
                        .join();
                long end = 2L * batches;
                await().atMost(Duration.ofSeconds(120)).until(() -> watermark.get() == end);

                assertThat(sink.asGroundTruth(1)).isEqualTo(sim.groundTruth());
                assertThat(listener.lastError()).isNull();
                // the replay hands over seq `end` too (the engine buffered it), so the watermark can reach it
                // before the replay's outcome is counted
                await().atMost(Duration.ofSeconds(30)).until(() -> metrics.get("replay.ok") == 1);
                assertThat(metrics.get("replay.recovered")).isEqualTo(batches + 1L);
                // 3000 missing batches in chunks of 500: six requests, the first from the watermark (2999, not
                // counted in its chunk), each other from the next expected seq
                ReplayRequests.assertAsked(sim, metrics, 6, "one request a chunk");
                assertThat(sim.replays().lastStart()).isEqualTo(batches + 5L * 500);
            }
        }
    }

    private static List<List<SimEvent>> workload(int n) {
        PrefixCacheEngine engine = new PrefixCacheEngine(4096, 16);
        SplittableRandom random = new SplittableRandom(1);
        List<List<SimEvent>> work = new ArrayList<>();
        while (work.size() < n) {
            int[] tokens = new int[16 * (4 + random.nextInt(8))];
            int prefix = random.nextInt(16);
            for (int i = 0; i < tokens.length; i++) {
                tokens[i] = i < 64 ? prefix * 1000 + i : random.nextInt(32_000);
            }
            PrefixCacheEngine.Served served = engine.serve(tokens);
            if (!served.events().isEmpty()) {
                work.add(served.events());
            }
        }
        return work;
    }
}
