package io.kvindexer.indexer.expiry;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.index.IndexOp;
import it.unimi.dsi.fastutil.longs.Long2LongLinkedOpenHashMap;
import it.unimi.dsi.fastutil.longs.Long2LongMap;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import it.unimi.dsi.fastutil.objects.ObjectIterator;
import java.util.ArrayList;
import java.util.List;

/**
 * The blocks one worker holds on the followed tiers, each tier oldest-stored first with the time of its last store
 * (a store again moves a block to the end). Kept beside the index, never in it: with no bound configured none of
 * this exists. Guarded by its own monitor: the worker's writer thread changes it, the sweep thread reads the oldest
 * times.
 */
final class WorkerBlocks {

    private static final int TIERS = StorageTier.values().length;

    /** per tier: block hash → {@code System.nanoTime()} of its last store; null until the tier holds a block */
    private final Long2LongLinkedOpenHashMap[] tiers = new Long2LongLinkedOpenHashMap[TIERS];
    /** per tier: a capacity eviction is cutting it down and has not reached its target yet */
    private final boolean[] draining = new boolean[TIERS];
    /** a {@link BlockExpiry} sweep of this worker waits in its writer's queue */
    boolean sweepQueued;

    void stored(int tier, long[] blockHashes, long now) {
        Long2LongLinkedOpenHashMap blocks = tiers[tier];
        if (blocks == null) {
            blocks = tiers[tier] = new Long2LongLinkedOpenHashMap();
        }
        for (long h : blockHashes) {
            blocks.putAndMoveToLast(h, now);
        }
    }

    /**
     * One block stored at {@code time}, which may be older than the tier's newest (a recovered block's last store on
     * the replica that dumped it); {@link #reorder} puts the tier back in time order afterwards. A block this worker
     * already holds keeps the later of the two times.
     */
    void storedAt(int tier, long blockHash, long time) {
        Long2LongLinkedOpenHashMap blocks = tiers[tier];
        if (blocks == null) {
            blocks = tiers[tier] = new Long2LongLinkedOpenHashMap();
        }
        if (blocks.containsKey(blockHash) && blocks.get(blockHash) - time > 0) {
            return;
        }
        blocks.putAndMoveToLast(blockHash, time);
    }

    /** Sorts a tier oldest-stored first again, after {@link #storedAt} (recovery only: n log n over the tier). */
    void reorder(int tier) {
        Long2LongLinkedOpenHashMap blocks = tiers[tier];
        if (blocks == null) {
            return;
        }
        long[][] copy = times(tier);
        Integer[] order = new Integer[copy[0].length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        // stable: blocks of equal time keep their order of store
        java.util.Arrays.sort(order, (a, b) -> Long.compare(copy[1][a], copy[1][b]));
        blocks.clear();
        for (int i : order) {
            blocks.put(copy[0][i], copy[1][i]);
        }
    }

    /** A tier's blocks and the times of their last store, oldest first ({@code [hashes, times]}). */
    long[][] times(int tier) {
        Long2LongLinkedOpenHashMap blocks = tiers[tier];
        int n = blocks == null ? 0 : blocks.size();
        long[] hashes = new long[n];
        long[] times = new long[n];
        if (blocks != null) {
            int i = 0;
            ObjectIterator<Long2LongMap.Entry> it = blocks.long2LongEntrySet().fastIterator();
            while (it.hasNext()) {
                Long2LongMap.Entry e = it.next();
                hashes[i] = e.getLongKey();
                times[i++] = e.getLongValue();
            }
        }
        return new long[][] {hashes, times};
    }

    void removed(int tier, long[] blockHashes) {
        Long2LongLinkedOpenHashMap blocks = tiers[tier];
        if (blocks == null) {
            return;
        }
        for (long h : blockHashes) {
            blocks.remove(h);
        }
        if (blocks.isEmpty()) {
            tiers[tier] = null;
            draining[tier] = false;
        }
    }

    void clear() {
        for (int t = 0; t < TIERS; t++) {
            tiers[t] = null;
            draining[t] = false;
        }
    }

    boolean isEmpty() {
        for (Long2LongLinkedOpenHashMap blocks : tiers) {
            if (blocks != null) {
                return false;
            }
        }
        return true;
    }

    /** Blocks followed on every tier. */
    long size() {
        long n = 0;
        for (Long2LongLinkedOpenHashMap blocks : tiers) {
            n += blocks == null ? 0 : blocks.size();
        }
        return n;
    }

    /** Whether any tier holds more than {@code cap} blocks. */
    boolean overCap(long cap) {
        for (Long2LongLinkedOpenHashMap blocks : tiers) {
            if (blocks != null && blocks.size() > cap) {
                return true;
            }
        }
        return false;
    }

    /** Whether the oldest block of a tier with a TTL ({@code ttlNanos[t] > 0}) has outlived it at {@code now}. */
    boolean anyExpired(long[] ttlNanos, long now) {
        for (int t = 0; t < TIERS; t++) {
            Long2LongLinkedOpenHashMap blocks = tiers[t];
            if (ttlNanos[t] > 0 && blocks != null && now - blocks.get(blocks.firstLongKey()) >= ttlNanos[t]) {
                return true;
            }
        }
        return false;
    }

    /** What one sweep step removes: ordinary remove ops, and how many blocks per tier and reason. */
    record Due(List<IndexOp> ops, long[][] counts, boolean more) {}

    /**
     * Up to {@code budget} blocks to remove now, oldest first: those past their tier's TTL, then, on a tier above
     * {@code cap} (or still being cut down), the oldest until {@code downTo} remain. Nothing is changed here: the
     * removes, once applied, come back through {@link #removed}.
     */
    Due due(long[] ttlNanos, long cap, long downTo, long now, int budget) {
        List<IndexOp> ops = new ArrayList<>(2);
        long[][] counts = new long[TIERS][ExpiryReason.values().length];
        int left = budget;
        boolean more = false;
        for (int t = 0; t < TIERS; t++) {
            Long2LongLinkedOpenHashMap blocks = tiers[t];
            if (blocks == null) {
                continue;
            }
            if (cap > 0 && blocks.size() > cap) {
                draining[t] = true;
            }
            LongArrayList out = new LongArrayList();
            int remaining = blocks.size();
            ObjectIterator<Long2LongMap.Entry> it = blocks.long2LongEntrySet().fastIterator();
            while (it.hasNext() && left > 0) {
                Long2LongMap.Entry e = it.next();
                ExpiryReason reason;
                if (ttlNanos[t] > 0 && now - e.getLongValue() >= ttlNanos[t]) {
                    reason = ExpiryReason.TTL;
                } else if (draining[t] && remaining > downTo) {
                    reason = ExpiryReason.CAPACITY;
                } else {
                    break;
                }
                out.add(e.getLongKey());
                counts[t][reason.ordinal()]++;
                remaining--;
                left--;
            }
            if (draining[t] && remaining <= downTo) {
                draining[t] = false;
            }
            if (left == 0 && it.hasNext()) {
                more = true; // maybe: the next step looks again
            }
            if (!out.isEmpty()) {
                ops.add(new IndexOp.Remove(StorageTier.ofOrdinal(t), out.toLongArray()));
            }
        }
        return new Due(ops, counts, more);
    }
}
