package io.kvindexer.indexer.index;

import java.util.List;
import java.util.Optional;

/**
 * The map (model, tenant) → {@link ModelIndex}. The first registration fixes an index's block size.
 *
 * <p>CONTRACT STUB: bodies come with the core index.
 */
public final class Indexers implements AutoCloseable {

    /** Thrown when an index exists with another block size. */
    public static final class BlockSizeMismatchException extends Exception {
        private final int existing;

        public BlockSizeMismatchException(int existing, int requested, String model, String tenant) {
            super("block_size mismatch for model=" + model + " tenant=" + tenant + ": existing=" + existing
                    + ", requested=" + requested);
            this.existing = existing;
        }

        public int existing() {
            return existing;
        }
    }

    public Indexers(IndexOptions options) {
        throw new UnsupportedOperationException("core index");
    }

    public ModelIndex getOrCreate(String model, String tenant, int blockSize) throws BlockSizeMismatchException {
        throw new UnsupportedOperationException("core index");
    }

    public Optional<ModelIndex> get(String model, String tenant) {
        throw new UnsupportedOperationException("core index");
    }

    /** Drops an index (after its last worker is unregistered). */
    public void remove(String model, String tenant) {
        throw new UnsupportedOperationException("core index");
    }

    /** Every index, ordered by model then tenant. */
    public List<ModelIndex> all() {
        throw new UnsupportedOperationException("core index");
    }

    /** Completes when every write submitted to any index before this call has been applied. */
    public java.util.concurrent.CompletableFuture<Void> flushAll() {
        throw new UnsupportedOperationException("core index");
    }

    @Override
    public void close() {
        throw new UnsupportedOperationException("core index");
    }
}
