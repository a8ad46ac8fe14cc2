package io.kvindexer.bench;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.hash.BlockHasher;
import io.kvindexer.indexer.ingest.BatchSink;
import io.kvindexer.indexer.ingest.EngineListener;
import io.kvindexer.indexer.ingest.ListenerOptions;
import io.kvindexer.indexer.ingest.ListenerSpec;
import io.kvindexer.indexer.ingest.ReadyGate;
import io.kvindexer.indexer.ingest.SequenceWatermark;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The same-run floor of {@link ZmqIngestBench}: the same simulators publishing the same frames over the same kind
 * of sockets to the same listeners (one thread each: receive, sequence rules, decode), whose sink computes every
 * stored block's local hash like the index's converter and drops the result. No index, no HTTP. What the indexer
 * achieves over this is the share of the ingest path the index (and its writer hand-off) costs.
 */
final class ZmqIngestFloor {

    private ZmqIngestFloor() {}

    /** One floor run: its rate, and the process CPU it took per block event (less noisy on a shared machine). */
    record Result(double blockEventsPerSecond, double cpuNanosPerBlockEvent) {}

    /** CPU time of this whole process (every thread: simulators, sockets, listeners, index), in nanoseconds. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** Publishes {@code w} through fresh simulators to bare listeners; block events per second, first publish → last seq. */
    static Result run(SimFleet.Encoded frames, int publishers, int window) throws InterruptedException {
        Workload w = frames.workload();
        LongAdder checksum = new LongAdder();
        BatchSink hashing = new BatchSink() {
            @Override
            public void apply(WorkerKey worker, List<KvEvent> events) {
                long sum = 0;
                for (KvEvent e : events) {
                    if (e instanceof BlockStored s && s.tokenIds() != null) {
                        long seed = BlockHasher.seed(s.loraName());
                        for (int off = 0;
                                off + s.blockSize() <= s.tokenIds().length && s.blockSize() > 0;
                                off += s.blockSize()) {
                            sum += BlockHasher.hashBlock(s.tokenIds(), off, s.blockSize(), seed, null);
                        }
                    } else if (e instanceof BlockRemoved r && r.blockHashes() != null) {
                        sum += r.blockHashes().length;
                    }
                }
                checksum.add(sum);
            }

            @Override
            public void publisherRestarted(WorkerKey worker) {}
        };
        List<EngineListener> listeners = new ArrayList<>();
        List<SequenceWatermark> watermarks = new ArrayList<>();
        try (SimFleet fleet = new SimFleet(frames, null)) {
            fleet.start();
            for (int i = 0; i < fleet.workers(); i++) {
                SequenceWatermark watermark = new SequenceWatermark();
                watermarks.add(watermark);
                EngineListener listener = new EngineListener(
                        new ListenerSpec(
                                SimFleet.instanceId(i),
                                0,
                                fleet.sim(i).endpoint(),
                                fleet.sim(i).replayEndpoint()),
                        watermark,
                        hashing,
                        ReadyGate.open(),
                        ListenerOptions.defaults());
                listeners.add(listener);
                listener.start();
            }
            for (int i = 0; i < fleet.workers(); i++) {
                SequenceWatermark watermark = watermarks.get(i);
                fleet.awaitJoined(i, m -> awaitApplied(watermark, 200_000_000L));
            }
            fleet.window(window, worker -> watermarks.get(worker).get());
            long cpuStart = processCpuNanos();
            long start = System.nanoTime();
            fleet.feed(publishers, 0, "floor-feeder");
            for (int i = 0; i < fleet.workers(); i++) {
                long last = fleet.sim(i).nextSeq() - 1;
                while (watermarks.get(i).get() != last) {
                    LockSupport.parkNanos(100_000);
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            long cpu = processCpuNanos() - cpuStart;
            if (checksum.sum() == 42) {
                System.out.print(""); // keeps the hashing live
            }
            long blockEvents = w.storedBlocks() + w.removedBlocks();
            return new Result(blockEvents / seconds, (double) cpu / blockEvents);
        } finally {
            listeners.forEach(EngineListener::close);
        }
    }

    /** True once {@code watermark} has a seq, within {@code timeoutNanos}. */
    private static boolean awaitApplied(SequenceWatermark watermark, long timeoutNanos) {
        long end = System.nanoTime() + timeoutNanos;
        while (watermark.get() == SequenceWatermark.UNSET) {
            if (System.nanoTime() > end) {
                return false;
            }
            LockSupport.parkNanos(1_000_000);
        }
        return true;
    }
}
