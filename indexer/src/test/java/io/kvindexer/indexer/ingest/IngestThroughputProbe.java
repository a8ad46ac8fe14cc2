package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.model.WorkerKey;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.PrefixCacheEngine;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Not a test: end-to-end ingest rate, EngineSimulator → ZeroMQ → EngineListener (decode, seq, apply to a
 * counting sink), and how fast a gap of N batches is recovered by replay. Prints figures.
 * Usage: {@code java -cp <test-classes>:<classes>:<libs> io.kvindexer.indexer.ingest.IngestThroughputProbe [batches]}.
 */
public final class IngestThroughputProbe {

    public static void main(String[] args) {
        int batches = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
        LongAdder events = new LongAdder();
        BatchSink counting = new BatchSink() {
            @Override
            public void apply(WorkerKey worker, List<KvEvent> list) {
                events.add(list.size());
            }

            @Override
            public void publisherRestarted(WorkerKey worker) {
            }
        };
        try (EngineSimulator sim = EngineSimulator.start(EngineSimulator.Options.defaults()
                .withBufferSteps(batches + 10))) {
            SequenceWatermark watermark = new SequenceWatermark();
            try (EngineListener listener = new EngineListener(new ListenerSpec(1, 0, sim.endpoint(),
                    sim.replayEndpoint()), watermark, counting, ReadyGate.open(),
                    EngineListener.Options.defaults().withReplayTimeout(Duration.ofSeconds(30)))) {
                listener.start();
                while (listener.status() != ListenerStatus.ACTIVE || sim.subscriptions() < 1) {
                    LockSupport.parkNanos(10_000_000);
                }
                // a realistic mix: 16-token blocks, shared prompts, LRU evictions
                PrefixCacheEngine engine = new PrefixCacheEngine(4096, 16);
                SplittableRandom random = new SplittableRandom(1);
                List<List<io.kvindexer.indexer.sim.SimEvent>> work = new java.util.ArrayList<>();
                while (work.size() < 2 * batches) {
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

                long start = System.nanoTime();
                for (int i = 0; i < batches; i++) {
                    sim.publish(work.get(i));
                }
                long last = batches - 1;
                while (watermark.get() != last) {
                    LockSupport.parkNanos(1_000_000);
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("live: %d batches (%d events) in %.2f s = %.0f batches/s, %.0f events/s%n",
                        batches, events.sum(), seconds, batches / seconds, events.sum() / seconds);

                // a gap of `batches` that must come back by replay
                long before = events.sum();
                sim.dropLive(batches);
                for (int i = batches; i < 2 * batches; i++) {
                    sim.publish(work.get(i));
                }
                start = System.nanoTime();
                sim.publish(List.of(EngineSimulator.cleared())).join();
                long end = 2L * batches;
                while (watermark.get() != end) {
                    LockSupport.parkNanos(1_000_000);
                }
                seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf("replay: %d batches (%d events) recovered in %.2f s = %.0f batches/s; last_error=%s%n",
                        batches, events.sum() - before, seconds, batches / seconds, listener.lastError());
            }
        }
    }
}
