package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.sim.EngineSimulator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongConsumer;

/**
 * A BatchSink that keeps, per (worker, tier), the set of engine hashes held (stored minus removed minus
 * cleared, the same rule as the simulator's ground truth), plus the order of everything applied.
 */
final class RecordingSink implements BatchSink {

    private final Map<WorkerKey, Map<StorageTier, Set<Long>>> held = new HashMap<>();
    private final List<String> log = new ArrayList<>();
    private final List<WorkerKey> restarts = new ArrayList<>();
    private final List<WorkerKey> gapLosses = new ArrayList<>();
    private final boolean logging;
    private int batches;

    RecordingSink() {
        this(true);
    }

    /** {@code logging} false: no order log (long streams, where building it would dominate the test). */
    RecordingSink(boolean logging) {
        this.logging = logging;
    }

    @Override
    public synchronized void apply(WorkerKey worker, List<KvEvent> events) {
        batches++;
        Map<StorageTier, Set<Long>> tiers = held.computeIfAbsent(worker, k -> new HashMap<>());
        for (KvEvent event : events) {
            switch (event) {
                case BlockStored s -> each(worker, "stored", s.blockHashes(), heldIn(tiers, s.tier())::add);
                case BlockRemoved r -> each(worker, "removed", r.blockHashes(), heldIn(tiers, r.tier())::remove);
                case AllBlocksCleared c -> {
                    tiers.clear();
                    log.add(worker + " cleared");
                }
            }
        }
    }

    private static Set<Long> heldIn(Map<StorageTier, Set<Long>> tiers, StorageTier tier) {
        return tiers.computeIfAbsent(tier, k -> new HashSet<>());
    }

    /** Applies {@code change} to every hash in the event's order, and logs each as {@code <worker> <verb> <hash>}. */
    private void each(WorkerKey worker, String verb, long[] hashes, LongConsumer change) {
        for (long h : hashes) {
            change.accept(h);
            if (logging) {
                log.add(worker + " " + verb + " " + Long.toUnsignedString(h));
            }
        }
    }

    @Override
    public synchronized void publisherRestarted(WorkerKey worker) {
        restarts.add(worker);
        held.remove(worker);
        log.add(worker + " restarted");
    }

    @Override
    public synchronized void gapUnrecoverable(WorkerKey worker) {
        gapLosses.add(worker);
        held.remove(worker);
        log.add(worker + " dropped");
    }

    synchronized List<WorkerKey> gapLosses() {
        return List.copyOf(gapLosses);
    }

    synchronized Set<Long> held(WorkerKey worker, StorageTier tier) {
        return Set.copyOf(held.getOrDefault(worker, Map.of()).getOrDefault(tier, Set.of()));
    }

    /** What the sink holds in the simulator's ground-truth shape, for one instance. */
    synchronized Map<EngineSimulator.Holder, Set<Long>> asGroundTruth(long instanceId) {
        Map<EngineSimulator.Holder, Set<Long>> out = new HashMap<>();
        held.forEach((worker, tiers) -> {
            if (worker.instanceId() == instanceId) {
                tiers.forEach((tier, set) -> {
                    if (!set.isEmpty()) {
                        out.put(new EngineSimulator.Holder(worker.dpRank(), tier), Set.copyOf(set));
                    }
                });
            }
        });
        return out;
    }

    synchronized List<String> log() {
        return List.copyOf(log);
    }

    synchronized List<WorkerKey> restarts() {
        return List.copyOf(restarts);
    }

    synchronized int batches() {
        return batches;
    }
}
