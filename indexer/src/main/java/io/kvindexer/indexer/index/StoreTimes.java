package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.util.HashMap;
import java.util.Map;

/**
 * When each block was last stored (wall clock, epoch millis), by worker and tier: what a snapshot or a binary dump
 * carries for the tiers with a {@code --block-ttl}, so that a recovered block's TTL runs from its last store and not
 * from its arrival. Wall clock because a replica's monotonic clock means nothing to another process. Filled by
 * recovery before it installs a staged index, read by block expiry as the recovered stores are applied.
 */
public final class StoreTimes {

    /** Receives the times of one worker's blocks on one tier (arrays of equal length, not kept by the receiver). */
    @FunctionalInterface
    public interface Sink {
        void times(WorkerKey worker, StorageTier tier, long[] blockHashes, long[] epochMillis);
    }

    /** No times: every recovered block starts its time when it arrives. */
    public static final StoreTimes NONE = new StoreTimes();

    private final Map<WorkerKey, Long2LongOpenHashMap[]> byWorker = new HashMap<>();

    /** Adds times (the arrays are not kept). */
    public void times(WorkerKey worker, StorageTier tier, long[] blockHashes, long[] epochMillis) {
        Long2LongOpenHashMap[] tiers =
                byWorker.computeIfAbsent(worker, w -> new Long2LongOpenHashMap[StorageTier.values().length]);
        Long2LongOpenHashMap m = tiers[tier.ordinal()];
        if (m == null) {
            m = tiers[tier.ordinal()] = new Long2LongOpenHashMap(blockHashes.length);
            m.defaultReturnValue(Long.MIN_VALUE);
        }
        for (int i = 0; i < blockHashes.length; i++) {
            m.put(blockHashes[i], epochMillis[i]);
        }
    }

    /** The worker's blocks on {@code tier} with a time, or null when it has none there. */
    public Long2LongOpenHashMap of(WorkerKey worker, StorageTier tier) {
        Long2LongOpenHashMap[] tiers = byWorker.get(worker);
        return tiers == null ? null : tiers[tier.ordinal()];
    }

    public boolean isEmpty() {
        return byWorker.isEmpty();
    }
}
