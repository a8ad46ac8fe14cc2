package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * How one index's cache is spread over its workers, for the web console ({@code GET /stats}, {@code GET /prefixes}).
 *
 * <p>Both walks visit every node once, taking the read lock for {@value #CHUNK} nodes at a time, so writers and
 * queries are never held up for a whole walk (well under a millisecond per chunk). Each chunk is a consistent view;
 * the whole result is not a snapshot when events arrive during the walk (a block that moves between chunks can be
 * counted once, twice or not at all), which is what a monitoring view needs and all it claims. Nodes created after a
 * walk began are not visited.
 */
public final class CacheSurvey {

    /** nodes visited per read-lock acquisition */
    public static final int CHUNK = 65_536;
    /** holders listed per prefix (the count is always exact) */
    static final int MAX_HOLDERS_LISTED = 16;

    private static final int TIERS = StorageTier.values().length;
    private static final int NO_PARENT = -1;

    /** Blocks one worker holds, per tier (index = {@link StorageTier#ordinal()}). */
    public record WorkerBlocks(WorkerKey worker, long[] blocksByTier) {
        public long blocks(StorageTier tier) {
            return blocksByTier[tier.ordinal()];
        }
    }

    /**
     * A prefix that several workers share: the chain of {@code depth} blocks from a root to {@code blockHash}, where
     * the sharing ends (no child block is held by as many workers).
     *
     * @param depth     blocks from the root, this one included
     * @param workers   distinct workers holding this block (on any tier)
     * @param blockHash the engine's block hash of the prefix's last block
     * @param holders   up to {@value #MAX_HOLDERS_LISTED} of those workers, ordered by instance id then dp rank
     */
    public record SharedPrefix(int depth, int workers, long blockHash, List<WorkerKey> holders) {}

    private final ShardedIndex index;

    CacheSurvey(ShardedIndex index) {
        this.index = index;
    }

    /** Blocks per worker and tier, ordered by instance id then dp rank; workers holding nothing are absent. */
    public List<WorkerBlocks> workerBlocks() {
        Map<WorkerKey, long[]> byWorker = new HashMap<>();
        for (int s = 0; s < index.size(); s++) {
            PrefixIndex shard = index.shard(s);
            shard.visitNodes(shard.read(NodeView::nodeIdBound), CHUNK, (nodes, start, end) -> {
                long[][] perSlot = new long[16][];
                OwnerCodes codes = new OwnerCodes();
                for (int node = start; node < end; node++) {
                    if (!nodes.isLive(node)) {
                        continue;
                    }
                    for (int o = 0, n = codes.load(nodes, node); o < n; o++) {
                        int code = codes.at(o);
                        int slot = MembershipCode.slot(code);
                        if (slot >= perSlot.length) {
                            perSlot = Arrays.copyOf(perSlot, Math.max(slot + 1, perSlot.length * 2));
                        }
                        if (perSlot[slot] == null) {
                            perSlot[slot] = new long[TIERS];
                        }
                        perSlot[slot][MembershipCode.tier(code)]++;
                    }
                }
                // fold by worker while the lock still pins each slot to its worker
                for (int slot = 0; slot < perSlot.length; slot++) {
                    WorkerKey w = perSlot[slot] == null ? null : nodes.workerOfCode(MembershipCode.of(slot, 0));
                    if (w != null) {
                        long[] sum = byWorker.computeIfAbsent(w, k -> new long[TIERS]);
                        for (int t = 0; t < TIERS; t++) {
                            sum[t] += perSlot[slot][t];
                        }
                    }
                }
            });
        }
        return byWorker.entrySet().stream()
                .map(e -> new WorkerBlocks(e.getKey(), e.getValue()))
                .sorted(Comparator.comparing(WorkerBlocks::worker, WorkerKey.ORDER))
                .toList();
    }

    /**
     * The {@code limit} most shared prefixes: most workers first, then the deepest. One chunked pass records each
     * node's parent (with several shards, its parent's hash), holder count and block hash into arrays (16 bytes a
     * node with one shard, freed after the call); depths and the ends of sharing are then computed off the lock; a
     * last short read-locked step per shard names the winners' holders.
     */
    public List<SharedPrefix> sharedPrefixes(int limit) {
        if (limit <= 0) {
            return List.of();
        }
        // shard s's node i is node base[s] + i here
        int[] base = new int[index.size() + 1];
        for (int s = 0; s < index.size(); s++) {
            base[s + 1] = base[s] + index.shard(s).read(NodeView::nodeIdBound);
        }
        int size = base[index.size()];
        boolean sharded = index.size() > 1;
        int[] holders = new int[size];
        long[] blockHash = new long[size];
        // one shard: parents are node ids of the walk; several: a copy's parent may live in another shard only, so
        // the walk records parent hashes and ShardMerge resolves them over all shards
        int[] parent = sharded ? null : new int[size];
        long[] parentHash = sharded ? new long[size] : null;
        boolean[] hasParent = sharded ? new boolean[size] : null;
        for (int s = 0; s < index.size(); s++) {
            int offset = base[s];
            int shardSize = base[s + 1] - offset;
            index.shard(s).visitNodes(shardSize, CHUNK, (nodes, start, end) -> {
                int[] seen = new int[64];
                OwnerCodes codes = new OwnerCodes();
                int stamp = 0;
                for (int node = start; node < end; node++) {
                    if (!nodes.isLive(node)) {
                        holders[offset + node] = 0;
                        continue;
                    }
                    stamp++;
                    int distinct = 0;
                    for (int o = 0, n = codes.load(nodes, node); o < n; o++) {
                        int slot = MembershipCode.slot(codes.at(o));
                        if (slot >= seen.length) {
                            seen = Arrays.copyOf(seen, Math.max(slot + 1, seen.length * 2));
                        }
                        if (seen[slot] != stamp) {
                            seen[slot] = stamp;
                            distinct++;
                        }
                    }
                    holders[offset + node] = distinct;
                    blockHash[offset + node] = nodes.blockHash(node);
                    if (!sharded) {
                        int p = nodes.hasParent(node) ? nodes.parentNode(node) : NodeStore.NONE;
                        parent[node] = p >= 0 && p < shardSize ? p : NO_PARENT;
                    } else if (nodes.hasParent(node)) {
                        parentHash[offset + node] = nodes.parentBlockHash(node);
                        hasParent[offset + node] = true;
                    }
                }
            });
        }
        int[] parents = sharded ? ShardMerge.merge(holders, blockHash, hasParent, parentHash) : parent;
        boolean[] extended = new boolean[size];
        for (int node = 0; node < size; node++) {
            int p = parents[node];
            if (holders[node] > 0 && p != NO_PARENT && holders[p] == holders[node]) {
                extended[p] = true; // the sharing goes on below p: p is not where a shared prefix ends
            }
        }
        int[] depth = depths(parents, holders);
        PriorityQueue<Integer> best = new PriorityQueue<>(
                limit + 1,
                (a, b) -> holders[a] != holders[b]
                        ? Integer.compare(holders[a], holders[b])
                        : Integer.compare(depth[a], depth[b]));
        for (int node = 0; node < size; node++) {
            if (holders[node] == 0 || extended[node]) {
                continue;
            }
            if (best.size() < limit) {
                best.add(node);
            } else if (best.comparator().compare(node, best.peek()) > 0) {
                best.poll();
                best.add(node);
            }
        }
        return describe(new ArrayList<>(best), depth, holders, blockHash);
    }

    /** Depth of every node along the recorded parents (iterative, memoised; a cycle of stale ids is cut). */
    private static int[] depths(int[] parent, int[] holders) {
        int[] depth = new int[parent.length];
        int[] path = new int[64];
        for (int node = 0; node < parent.length; node++) {
            if (holders[node] == 0 || depth[node] != 0) {
                continue;
            }
            int n = 0;
            int x = node;
            while (x != NO_PARENT && depth[x] == 0 && holders[x] > 0 && n <= parent.length) {
                if (n == path.length) {
                    path = Arrays.copyOf(path, n * 2);
                }
                path[n++] = x;
                depth[x] = -1; // on the current path: meeting it again means a cycle
                x = parent[x];
            }
            int base = x == NO_PARENT || holders[x] == 0 || depth[x] < 0 ? 0 : depth[x];
            for (int i = n - 1; i >= 0; i--) {
                depth[path[i]] = ++base;
            }
        }
        return depth;
    }

    /**
     * Names the chosen blocks' holders, under each shard's read lock in turn. A block freed since the walk, or whose
     * holders changed, is left out: nothing is reported that the index does not hold.
     */
    private List<SharedPrefix> describe(List<Integer> chosen, int[] depth, int[] holderCounts, long[] blockHash) {
        List<List<WorkerKey>> holders = new ArrayList<>();
        for (int i = 0; i < chosen.size(); i++) {
            holders.add(new ArrayList<>());
        }
        for (int s = 0; s < index.size(); s++) {
            index.shard(s).read(nodes -> {
                for (int i = 0; i < chosen.size(); i++) {
                    nodes.addHolders(blockHash[chosen.get(i)], holders.get(i));
                }
                return null;
            });
        }
        List<SharedPrefix> out = new ArrayList<>(chosen.size());
        for (int i = 0; i < chosen.size(); i++) {
            int node = chosen.get(i);
            List<WorkerKey> workers = holders.get(i);
            if (workers.size() != holderCounts[node]) {
                continue;
            }
            workers.sort(WorkerKey.ORDER);
            out.add(new SharedPrefix(
                    depth[node],
                    workers.size(),
                    blockHash[node],
                    List.copyOf(workers.subList(0, Math.min(MAX_HOLDERS_LISTED, workers.size())))));
        }
        out.sort(Comparator.comparingInt(SharedPrefix::workers)
                .reversed()
                .thenComparing(Comparator.comparingInt(SharedPrefix::depth).reversed())
                .thenComparing(SharedPrefix::blockHash, Long::compareUnsigned)); // ties in a stable order
        return out;
    }

    /** One node's owner codes at a time, in a buffer reused across the nodes of a walk (no allocation per node). */
    private static final class OwnerCodes {
        private int[] buf = new int[16];

        /** Loads the node's codes; returns how many. */
        int load(NodeView nodes, int node) {
            int count = nodes.ownerCount(node);
            if (count > buf.length) {
                buf = new int[Math.max(count, buf.length * 2)];
            }
            return nodes.ownerCodes(node, buf);
        }

        int at(int i) {
            return buf[i];
        }
    }
}
