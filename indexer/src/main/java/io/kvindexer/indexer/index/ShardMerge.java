package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.longs.Long2IntOpenHashMap;
import java.util.Arrays;

/**
 * Folds the per-shard nodes of {@link CacheSurvey#sharedPrefixes} into one node per block: a block that workers of
 * two shards hold has a node in each ({@link ShardedIndex}), and a prefix is shared by the workers of all of them.
 */
final class ShardMerge {

    private static final int NO_PARENT = -1;

    private ShardMerge() {}

    /**
     * Over the nodes of all shards: the first node of each block hash becomes the block's node, with the holders of
     * every copy added up in place (workers never span shards, so the sum is exact) and the others' holders set to
     * 0. Returns each node's parent as a block's node, found by its hash in any shard ({@code parentHash},
     * meaningful where {@code hasParent}), or -1.
     */
    static int[] merge(int[] holders, long[] blockHash, boolean[] hasParent, long[] parentHash) {
        int size = holders.length;
        int[] blockNode = new int[size];
        Long2IntOpenHashMap first = new Long2IntOpenHashMap();
        first.defaultReturnValue(NO_PARENT);
        for (int node = 0; node < size; node++) {
            blockNode[node] = NO_PARENT;
            if (holders[node] > 0) {
                int seen = first.putIfAbsent(blockHash[node], node);
                blockNode[node] = seen == NO_PARENT ? node : seen;
            }
        }
        int[] parent = new int[size];
        Arrays.fill(parent, NO_PARENT);
        for (int node = 0; node < size; node++) {
            int block = blockNode[node];
            if (block == NO_PARENT) {
                continue;
            }
            if (parent[block] == NO_PARENT && hasParent[node]) {
                parent[block] = first.get(parentHash[node]);
            }
            if (block != node) {
                holders[block] += holders[node];
                holders[node] = 0;
            }
        }
        return parent;
    }
}
