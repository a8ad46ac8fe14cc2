package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The prefix index of one (model, tenant) as one or more {@link PrefixIndex} shards (docs/adr/0001-prefix-index.md,
 * "Shards"). A worker lives in the shard of its writer thread ({@link IndexWriters#threadOf} of its instance id, modulo
 * the shard count), and only the threads of a shard write it, so the writers of two shards never wait for one another
 * (with as many shards as writer threads, each write lock is contended by readers only). A block that workers of two
 * shards hold has a node in each: that is the memory price ({@code --index-shards}).
 *
 * <p>Reads visit the shards one after another, each under its own read lock, and never hold two locks at once, so
 * they cannot deadlock with writers or with each other. A worker's memberships are all in one shard, so a query
 * still sees each worker's events whole; it may see one shard a little later than another, as it would see two
 * workers whose events arrived a moment apart.
 */
final class ShardedIndex {

    private static final int CHUNK = 16_384;

    private final PrefixIndex[] shards;
    private final ApplyCounters counters;
    /** the distinct-block count and the sum of shard versions it was taken at (guarded by this) */
    private long distinctAt = -1;

    private long distinct;

    ShardedIndex(int shardCount) {
        this.counters = new ApplyCounters();
        this.shards = new PrefixIndex[shardCount];
        for (int i = 0; i < shardCount; i++) {
            shards[i] = new PrefixIndex(counters);
        }
    }

    /** The shard writer thread {@code thread} writes (threads beyond the shard count share shards). */
    int shardOf(int thread) {
        return thread % shards.length;
    }

    int size() {
        return shards.length;
    }

    PrefixIndex shard(int i) {
        return shards[i];
    }

    ApplyCounters counters() {
        return counters;
    }

    boolean isEmpty() {
        return memberships() == 0 && blocksCounted() == 0;
    }

    long memberships() {
        long total = 0;
        for (PrefixIndex shard : shards) {
            total += shard.memberships();
        }
        return total;
    }

    /**
     * Distinct blocks held by anyone. With one shard, the shard's node count; with more, the nodes of all shards less
     * those a lower shard also holds: a scan of the shards past the first (chunked, one read lock at a time), cached
     * until any shard changes.
     */
    synchronized long blocks() {
        if (shards.length == 1) {
            return shards[0].blocks();
        }
        long version = 0;
        for (PrefixIndex shard : shards) {
            version += shard.version(); // each only grows: an equal sum means nothing changed
        }
        if (version != distinctAt) {
            distinct = blocksCounted() - heldInLowerShard();
            distinctAt = version;
        }
        return distinct;
    }

    private long blocksCounted() {
        long total = 0;
        for (PrefixIndex shard : shards) {
            total += shard.blocks();
        }
        return total;
    }

    private long heldInLowerShard() {
        long[] hashes = new long[CHUNK];
        boolean[] held = new boolean[CHUNK];
        long duplicates = 0;
        for (int s = 1; s < shards.length; s++) {
            for (int start = 0, n; (n = shards[s].blockHashes(start, hashes)) >= 0; start += CHUNK) {
                Arrays.fill(held, false);
                for (int r = 0; r < s; r++) {
                    shards[r].markHeld(hashes, n, held);
                }
                for (int i = 0; i < n; i++) {
                    if (held[i]) {
                        duplicates++;
                    }
                }
            }
        }
        return duplicates;
    }

    /** Tiered match over every shard; workers in {@link WorkerKey#ORDER}. */
    MatchResult findMatches(long[] localHashes) {
        if (shards.length == 1) {
            return shards[0].findMatches(localHashes);
        }
        List<MatchResult> found = new ArrayList<>(shards.length);
        for (PrefixIndex shard : shards) {
            MatchResult r = shard.findMatches(localHashes);
            if (!r.workers().isEmpty()) {
                found.add(r);
            }
        }
        if (found.size() <= 1) {
            return found.isEmpty() ? MatchResult.empty() : found.getFirst();
        }
        List<MatchResult.WorkerMatch> workers = new ArrayList<>();
        Map<WorkerKey, Integer> external = new HashMap<>();
        for (MatchResult r : found) {
            workers.addAll(r.workers());
            external.putAll(r.externalBlocks());
        }
        workers.sort((a, b) -> WorkerKey.ORDER.compare(a.worker(), b.worker()));
        return new MatchResult(List.copyOf(workers), external);
    }

    /**
     * Every membership: tier by tier (device first), each tier shard by shard, a parent before its children;
     * {@code between} (if not null) runs between two chunks of a walk, without the lock.
     */
    void dump(DumpSink sink, Runnable between) {
        for (StorageTier tier : StorageTier.values()) {
            for (PrefixIndex shard : shards) {
                shard.dump(tier, sink, DumpWalk.CHUNK, between);
            }
        }
    }

    /**
     * For the hash-only stores among {@code ops}, the blocks shard {@code self} lacks but another shard holds. Runs on
     * {@code self}'s writer thread before it takes its write lock; each other shard is read under its own lock.
     */
    KnownBlocks knownElsewhere(int self, List<? extends IndexOp> ops) {
        if (shards.length == 1) {
            return KnownBlocks.NONE;
        }
        KnownBlocks known = null;
        for (IndexOp op : ops) {
            if (!(op instanceof IndexOp.Store store) || !store.knownBlocksOnly()) {
                continue;
            }
            for (long blockHash : store.blockHashes()) {
                if (shards[self].block(blockHash) != null) {
                    continue;
                }
                for (int r = 0; r < shards.length; r++) {
                    KnownBlocks.Block block = r == self ? null : shards[r].block(blockHash);
                    if (block != null) {
                        if (known == null) {
                            known = new KnownBlocks();
                        }
                        known.put(blockHash, block);
                        break;
                    }
                }
            }
        }
        return known == null ? KnownBlocks.NONE : known;
    }
}
