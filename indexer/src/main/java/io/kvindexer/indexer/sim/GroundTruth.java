package io.kvindexer.indexer.sim;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.sim.EngineEventEncoder.Format;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the simulated engine holds per (dp rank, tier): stored minus removed minus cleared, in submission order.
 * The tier is the one a subscriber can know (v0.9.0 events carry no medium, so they land on the device tier).
 * Not thread-safe: the simulator guards it.
 */
final class GroundTruth {

    private final Format format;
    /** primitive sets: a busy simulator stores and removes millions of hashes (the benchmarks publish in-process) */
    private final Map<EngineSimulator.Holder, LongOpenHashSet> held = new HashMap<>();

    GroundTruth(Format format) {
        this.format = format;
    }

    void apply(int dpRank, List<SimEvent> events) {
        for (SimEvent e : events) {
            SimEvent event = e instanceof SimEvent.Shaped s ? s.event() : e;
            Format shape = e instanceof SimEvent.Shaped s ? s.format() : format;
            switch (event) {
                case SimEvent.Stored s -> {
                    LongOpenHashSet set =
                            held.computeIfAbsent(holder(dpRank, shape, s.medium()), k -> new LongOpenHashSet());
                    for (long h : s.hashes()) {
                        set.add(h);
                    }
                }
                case SimEvent.Removed r -> {
                    LongOpenHashSet set = held.get(holder(dpRank, shape, r.medium()));
                    if (set != null) {
                        for (long h : r.hashes()) {
                            set.remove(h);
                        }
                    }
                }
                case SimEvent.Cleared c -> held.keySet().removeIf(h -> h.dpRank() == dpRank);
                case SimEvent.Shaped s -> throw new IllegalArgumentException("nested Shaped event");
                default -> {
                    // unknown tags (and shapes added later) do not change what the engine holds
                }
            }
        }
    }

    /** How many leading blocks of {@code hashes} this rank already holds on that medium's tier. */
    int heldPrefix(int dpRank, String medium, long[] hashes) {
        LongOpenHashSet have = held.getOrDefault(holder(dpRank, format, medium), new LongOpenHashSet());
        int first = 0;
        while (first < hashes.length && have.contains(hashes[first])) {
            first++;
        }
        return first;
    }

    Set<Long> held(int dpRank, StorageTier tier) {
        LongOpenHashSet set = held.get(new EngineSimulator.Holder(dpRank, tier));
        return set == null ? Set.of() : Set.copyOf(set);
    }

    /** Every non-empty (dp rank, tier) and what it holds. */
    Map<EngineSimulator.Holder, Set<Long>> snapshot() {
        Map<EngineSimulator.Holder, Set<Long>> copy = new HashMap<>();
        held.forEach((k, v) -> {
            if (!v.isEmpty()) {
                copy.put(k, Set.copyOf(v));
            }
        });
        return copy;
    }

    void clear() {
        held.clear();
    }

    private static EngineSimulator.Holder holder(int dpRank, Format shape, String medium) {
        return new EngineSimulator.Holder(dpRank, StorageTier.fromMedium(shape == Format.ARRAY6 ? null : medium));
    }

    static long[] tail(long[] hashes, int from) {
        return Arrays.copyOfRange(hashes, from, hashes.length);
    }
}
