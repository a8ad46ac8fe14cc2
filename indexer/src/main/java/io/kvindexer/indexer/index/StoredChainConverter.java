package io.kvindexer.indexer.index;

import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.RouterEvent;
import io.kvindexer.indexer.model.StorageTier;
import io.kvindexer.indexer.hash.BlockHasher;
import it.unimi.dsi.fastutil.longs.LongOpenHashSet;

import java.util.Arrays;

/**
 * Turns a {@link BlockStored} into a hashed chain for an index of block size B (spec §2.7): each block's local
 * hash is XXH3 of its token slice (one more token per block for EAGLE bigrams) with the event's LoRA seed and the
 * block's multimodal hashes. Stateless; runs on the listener's thread.
 */
final class StoredChainConverter {

    private static final long[] NO_HASHES = new long[0];

    private StoredChainConverter() {
    }

    static IndexOp.Store convert(BlockStored event, int indexBlockSize) {
        long[] seqHashes = event.blockHashes() == null ? NO_HASHES : event.blockHashes();
        StorageTier tier = event.tier() == null ? StorageTier.DEVICE : event.tier();
        if (hasRepeats(seqHashes, event.hasParent(), event.parentBlockHash())) {
            return rejected(event, tier, ApplyStatus.INVALID_BLOCK);
        }
        if (event.hashesOnly()) {
            // no tokens to hash: the index attaches these hashes to the blocks it already knows (shared storage)
            return new IndexOp.Store(tier, false, 0, seqHashes, new long[seqHashes.length], ApplyStatus.OK, true,
                    true);
        }
        if (seqHashes.length > 0 && event.blockSize() != indexBlockSize) {
            return rejected(event, tier, ApplyStatus.BLOCK_SIZE_MISMATCH);
        }
        int[] tokens = event.tokenIds() == null ? new int[0] : event.tokenIds();
        int blockSize = event.blockSize();
        int window = blockSize + (event.eagle() ? 1 : 0);
        long seed = BlockHasher.seed(event.loraName());
        long[] localHashes = new long[seqHashes.length];
        int converted = 0;
        for (int offset = 0; converted < seqHashes.length; converted++, offset += blockSize) {
            if ((long) offset + window > tokens.length) {
                break;
            }
            long[] mm = event.mmHashes() != null && converted < event.mmHashes().length
                    ? event.mmHashes()[converted] : null;
            localHashes[converted] = BlockHasher.hashBlock(tokens, offset, window, seed, mm);
        }
        ApplyStatus status = converted < seqHashes.length ? ApplyStatus.INVALID_BLOCK : ApplyStatus.OK;
        return new IndexOp.Store(tier, event.hasParent(), event.parentBlockHash(),
                Arrays.copyOf(seqHashes, converted), Arrays.copyOf(localHashes, converted), status, false);
    }

    /** A recovered (peer dump) store: hashes come ready-made, and a device parent need not be held. */
    static IndexOp.Store convert(RouterEvent.Stored stored, StorageTier tier) {
        long[] seqHashes = stored.blockHashes() == null ? NO_HASHES : stored.blockHashes();
        long[] localHashes = stored.localHashes() == null ? NO_HASHES : stored.localHashes();
        StorageTier t = tier == null ? StorageTier.DEVICE : tier;
        if (hasRepeats(seqHashes, stored.hasParent(), stored.parentBlockHash())) {
            return new IndexOp.Store(t, stored.hasParent(), stored.parentBlockHash(), NO_HASHES, NO_HASHES,
                    ApplyStatus.INVALID_BLOCK, true);
        }
        int n = Math.min(seqHashes.length, localHashes.length);
        ApplyStatus status = n == seqHashes.length && n == localHashes.length ? ApplyStatus.OK
                : ApplyStatus.INVALID_BLOCK;
        return new IndexOp.Store(t, stored.hasParent(), stored.parentBlockHash(), Arrays.copyOf(seqHashes, n),
                Arrays.copyOf(localHashes, n), status, true);
    }

    private static IndexOp.Store rejected(BlockStored event, StorageTier tier, ApplyStatus status) {
        return new IndexOp.Store(tier, event.hasParent(), event.parentBlockHash(), NO_HASHES, NO_HASHES, status,
                false);
    }

    /** True when a hash repeats inside the chain or equals the parent (a self-referencing chain). */
    static boolean hasRepeats(long[] seqHashes, boolean hasParent, long parent) {
        if (seqHashes.length <= 8) {
            for (int i = 0; i < seqHashes.length; i++) {
                if (hasParent && seqHashes[i] == parent) {
                    return true;
                }
                for (int j = 0; j < i; j++) {
                    if (seqHashes[i] == seqHashes[j]) {
                        return true;
                    }
                }
            }
            return false;
        }
        LongOpenHashSet seen = new LongOpenHashSet(seqHashes.length * 2);
        if (hasParent) {
            seen.add(parent);
        }
        for (long h : seqHashes) {
            if (!seen.add(h)) {
                return true;
            }
        }
        return false;
    }
}
