package io.kvindexer.indexer.index;

import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.hash.BlockHasher;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;

/**
 * Turns decoded engine events into {@link IndexOp}s for an index of block size B (see "Local hash" in
 * {@code docs/concepts.md}): each stored block's local hash is XXH3 of its token slice (one more token per block
 * for EAGLE bigrams) with the event's LoRA seed and the block's multimodal hashes. Stateless; runs on the
 * listener's thread.
 */
final class StoredChainConverter {

    private static final long[] NO_HASHES = new long[0];

    /**
     * Chains up to this long are checked for repeats in their thread's reused set: a set allocated per chain was the
     * largest single share of the listeners' allocation, and of a prehashed replay's submitting thread's CPU.
     */
    private static final int REUSED_SET_MAX_BLOCKS = 512;

    private static final ThreadLocal<LongOpenHashSet> SEEN =
            ThreadLocal.withInitial(() -> new LongOpenHashSet(2 * REUSED_SET_MAX_BLOCKS));

    private StoredChainConverter() {}

    static IndexOp convert(KvEvent event, int indexBlockSize) {
        return switch (event) {
            case BlockStored stored -> convert(stored, indexBlockSize);
            case BlockRemoved removed -> new IndexOp.Remove(removed.tier(), removed.blockHashes());
            case AllBlocksCleared cleared -> new IndexOp.Clear();
        };
    }

    static IndexOp.Store convert(BlockStored event, int indexBlockSize) {
        return convert(event, indexBlockSize, null);
    }

    /** {@code salt}: the cache salt to mix into the seed ({@code --mix-cache-salt}), null for none. */
    static IndexOp.Store convert(BlockStored event, int indexBlockSize, String salt) {
        long[] blockHashes = event.blockHashes();
        if (hasRepeats(blockHashes, event.hasParent(), event.parentBlockHash())) {
            return rejected(event, ApplyStatus.INVALID_BLOCK);
        }
        if (event.hashesOnly()) {
            // no tokens to hash: the index attaches these hashes to the blocks it already knows (shared storage)
            return new IndexOp.Store(
                    event.tier(),
                    false,
                    0,
                    blockHashes,
                    new long[blockHashes.length],
                    ApplyStatus.OK,
                    IndexOp.Store.Source.HASHES_ONLY);
        }
        if (event.blockSizeDiffers(indexBlockSize)) {
            return rejected(event, ApplyStatus.BLOCK_SIZE_MISMATCH);
        }
        int[] tokens = event.tokenIds();
        int blockSize = event.blockSize();
        // the windows a query hashes too: one token more per block for EAGLE bigrams (fits: a hashable block's
        // window lies within the tokens)
        int window = (int) BlockHasher.window(blockSize, event.eagle());
        int hashable = Math.min(blockHashes.length, BlockHasher.blocks(tokens.length, blockSize, event.eagle()));
        long seed = event.seed(salt);
        long[] localHashes = new long[blockHashes.length];
        int converted = 0;
        for (int offset = 0; converted < hashable; converted++, offset += blockSize) {
            long[] mm = event.mmHashes() != null && converted < event.mmHashes().length
                    ? event.mmHashes()[converted]
                    : null;
            localHashes[converted] = BlockHasher.hashBlock(tokens, offset, window, seed, mm);
        }
        return IndexOp.Store.prefix(
                event.tier(),
                event.hasParent(),
                event.parentBlockHash(),
                blockHashes,
                localHashes,
                converted,
                IndexOp.Store.Source.ENGINE);
    }

    private static IndexOp.Store rejected(BlockStored event, ApplyStatus status) {
        return IndexOp.Store.rejected(
                event.tier(), event.hasParent(), event.parentBlockHash(), status, IndexOp.Store.Source.ENGINE);
    }

    /** True when a hash repeats inside the chain or equals the parent (a self-referencing chain). */
    static boolean hasRepeats(long[] blockHashes, boolean hasParent, long parentBlockHash) {
        if (blockHashes.length <= 8) {
            for (int i = 0; i < blockHashes.length; i++) {
                if (hasParent && blockHashes[i] == parentBlockHash) {
                    return true;
                }
                for (int j = 0; j < i; j++) {
                    if (blockHashes[i] == blockHashes[j]) {
                        return true;
                    }
                }
            }
            return false;
        }
        LongOpenHashSet seen;
        if (blockHashes.length <= REUSED_SET_MAX_BLOCKS) {
            seen = SEEN.get();
            seen.clear();
        } else {
            seen = new LongOpenHashSet(blockHashes.length * 2);
        }
        if (hasParent) {
            seen.add(parentBlockHash);
        }
        for (long h : blockHashes) {
            if (!seen.add(h)) {
                return true;
            }
        }
        return false;
    }
}
