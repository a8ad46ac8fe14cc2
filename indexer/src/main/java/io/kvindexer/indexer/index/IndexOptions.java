package io.kvindexer.indexer.index;

/**
 * Per-indexer options.
 *
 * @param mixCacheSalt   mix a query's {@code cache_salt} into the hash seed (Dynamo G3). Off by default: G2
 *                       accepts and ignores it, and engines that do not salt would never match salted queries.
 * @param writerThreads  size of the writer pool ({@code --threads}); events of one worker always go to the same thread
 */
public record IndexOptions(boolean mixCacheSalt, int writerThreads) {

    /** The writer pool's size unless configured ({@code --threads}); the one place this default is defined. */
    public static final int DEFAULT_WRITER_THREADS = 4;

    public static IndexOptions defaults() {
        return new IndexOptions(false, DEFAULT_WRITER_THREADS);
    }
}
