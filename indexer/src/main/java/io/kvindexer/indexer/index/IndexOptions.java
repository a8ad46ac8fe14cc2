package io.kvindexer.indexer.index;

/**
 * Per-indexer options.
 *
 * @param mixCacheSalt   mix a query's {@code cache_salt} into the hash seed (Dynamo G3). Off by default: G2
 *                       accepts and ignores it, and engines that do not salt would never match salted queries.
 * @param writerThreads  size of the writer pool ({@code --threads}); events of one worker always go to the same thread
 * @param shards         shards per index ({@code --index-shards}, at most {@code writerThreads}): writers of
 *                       different shards never wait for each other, but a block that workers of several shards hold
 *                       is stored once in each ({@link ShardedIndex})
 */
public record IndexOptions(boolean mixCacheSalt, int writerThreads, int shards) {

    /** The writer pool's size unless configured ({@code --threads}); the one place this default is defined. */
    public static final int DEFAULT_WRITER_THREADS = 4;

    /**
     * One shard unless configured: the smallest index, and one writer keeps up with most fleets
     * (docs/configuration.md, "Flags").
     */
    public static final int DEFAULT_SHARDS = 1;

    public IndexOptions {
        if (writerThreads < 1 || shards < 1) {
            throw new IllegalArgumentException(
                    "writer threads and shards must be >= 1, got " + writerThreads + " and " + shards);
        }
    }

    public IndexOptions(boolean mixCacheSalt, int writerThreads) {
        this(mixCacheSalt, writerThreads, DEFAULT_SHARDS);
    }

    public static IndexOptions defaults() {
        return new IndexOptions(false, DEFAULT_WRITER_THREADS);
    }
}
