package io.kvindexer.indexer.index;

import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;

/**
 * Blocks that other shards of an index hold, looked up by block hash before a hash-only store is applied: such a
 * store may join a block any engine of the (model, tenant) made known, and that engine may sit in another shard
 * ({@link ShardedIndex}). The lookup happens off the applying shard's write lock, so two shards' writers never wait
 * for each other's locks.
 */
final class KnownBlocks {

    /** What a store needs to create a block's node: its chain position and its local hash. */
    record Block(boolean hasParent, long parentBlockHash, long localHash) {}

    static final KnownBlocks NONE = new KnownBlocks();

    private final Long2ObjectOpenHashMap<Block> blocks = new Long2ObjectOpenHashMap<>();

    void put(long blockHash, Block block) {
        blocks.put(blockHash, block);
    }

    /** The block, or null when no other shard held it at lookup time. */
    Block get(long blockHash) {
        return blocks.get(blockHash);
    }
}
