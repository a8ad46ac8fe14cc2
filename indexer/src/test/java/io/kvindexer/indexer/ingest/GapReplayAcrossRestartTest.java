package io.kvindexer.indexer.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.TestResources;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A listener that lags its engine (its index writer held on the first batch) meets a gap in the old process's stream
 * only after the engine restarted (seq from 0, without a reconnect: the simulator keeps its sockets) and published
 * past the gap. The replay of that gap is answered by the new process, whose batches of those seqs are other ones;
 * and the old process's later live batches still wait in the socket, ahead of the new process's. At no moment may the
 * index hold blocks of both processes: the old ones are not the engine's any more, and a new one applied as the old
 * process's is claimed before the engine's restart is known.
 */
class GapReplayAcrossRestartTest {

    private static final long INSTANCE = 9;
    private static final int BLOCK = 4;
    private static final Duration PATIENCE = Duration.ofSeconds(60);

    @RegisterExtension
    final TestResources resources = new TestResources();

    private final RecordingSink recorded = new RecordingSink();
    private final CountingMetrics metrics = new CountingMetrics();
    private final SequenceWatermark watermark = new SequenceWatermark();

    @Test
    void aGapReplayAnsweredByARestartedEngineNeverMixesTheTwoProcessesBlocks() throws Exception {
        EngineSimulator sim = resources.add(EngineSimulator.start(EngineSimulator.Options.defaults()));
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        try {
            EngineListener listener = resources.listener(
                    new ListenerSpec(INSTANCE, 0, sim.endpoint(), sim.replayEndpoint()),
                    watermark,
                    HeldSink.first(recorded, entered, release),
                    metrics.options());
            Subscriptions.awaitActive(listener, sim, PATIENCE);

            // the old process: seq 0 (held in the index writer: the listener reads nothing more), 1, then 2 is
            // buffered but lost live, then 3..7 arrive live and wait in the socket
            sim.storeSequence(tokens(0), BLOCK).join();
            assertThat(entered.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
            sim.storeSequence(tokens(100), BLOCK).join();
            sim.dropLive(1);
            for (int b = 2; b <= 7; b++) {
                sim.storeSequence(tokens(b * 100), BLOCK).join();
            }
            // a new process: seq from 0 again, its buffer empty; it publishes 0..2, past the old gap at 2 but not
            // as far as the old process's queued 3..7
            sim.restart();
            for (int b = 0; b < 3; b++) {
                sim.storeSequence(tokens(5000 + b * 100), BLOCK).join();
            }
        } finally {
            release.countDown();
        }

        await().atMost(PATIENCE).until(() -> watermark.get() == 2 && metrics.get("restarts") >= 1);
        await().atMost(PATIENCE)
                .untilAsserted(
                        () -> assertThat(recorded.asGroundTruth(INSTANCE)).isEqualTo(sim.groundTruth()));
        assertThat(metrics.get("restarts")).as("one restart, found once").isEqualTo(1);
        assertNeverBoth(recorded.log());
    }

    /**
     * Replays the sink's log (stores, removals, drops in the order applied): after every step, the blocks held are of
     * one process only.
     */
    private static void assertNeverBoth(List<String> log) {
        Set<Long> oldBlocks = hashes(IntStream.rangeClosed(0, 7).map(b -> b * 100));
        Set<Long> newBlocks = hashes(IntStream.range(0, 3).map(b -> 5000 + b * 100));
        Set<Long> held = new HashSet<>();
        for (int i = 0; i < log.size(); i++) {
            String entry = log.get(i);
            String[] words = entry.split(" ");
            String verb = words[words.length - 2];
            if (entry.endsWith(" restarted") || entry.endsWith(" dropped") || entry.endsWith(" cleared")) {
                held.clear();
            } else if (verb.equals("stored")) {
                held.add(Long.parseUnsignedLong(words[words.length - 1]));
            } else if (verb.equals("removed")) {
                held.remove(Long.parseUnsignedLong(words[words.length - 1]));
            }
            boolean anyOld = held.stream().anyMatch(oldBlocks::contains);
            boolean anyNew = held.stream().anyMatch(newBlocks::contains);
            assertThat(anyOld && anyNew)
                    .as("blocks of the old and the new process held together after %s (step %d of %s)", entry, i, log)
                    .isFalse();
        }
    }

    private static Set<Long> hashes(IntStream starts) {
        return starts.boxed()
                .flatMap(start -> Arrays.stream(EngineSimulator.sequenceHashes(tokens(start), BLOCK, null))
                        .boxed())
                .collect(Collectors.toSet());
    }

    private static int[] tokens(int start) {
        return IntStream.range(start, start + 2 * BLOCK).toArray();
    }
}
