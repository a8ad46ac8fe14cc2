package io.kvindexer.indexer.event;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.hash.BlockHasher;

/**
 * A chain of consecutive full blocks newly cached by the engine.
 *
 * @param blockHashes     engine sequence hashes, one per block, oldest first (raw 64-bit patterns)
 * @param hasParent       false when the chain starts at the beginning of the sequence
 * @param parentBlockHash engine sequence hash of the block before {@code blockHashes[0]}; 0 when {@code !hasParent}
 * @param tokenIds        all tokens of those blocks (u32 values held in ints); for EAGLE the flattened bigram list
 * @param blockSize       tokens per block as the engine sees it
 * @param loraName        adapter name mixed into the local hash seed; null for the base model
 * @param loraId          vLLM's deprecated numeric adapter id when the event names no adapter otherwise (an engine
 *                        older than {@code lora_name}); null for the base model or when {@code loraName} is given
 * @param tier            storage tier from the event's {@code medium}
 * @param mmHashes        per block, the multimodal hashes to mix into its local hash; null when none at all,
 *                        and a null entry for a block without any
 * @param eagle           token ids arrived as bigram pairs: each block hashes {@code blockSize + 1} tokens
 * @param cacheSalt       the request's cache salt the event carries (SGLang's {@code cache_salt}, vLLM's tagged
 *                        extra key); null when none. Mixed into the seed only with {@code --mix-cache-salt}
 */
public record BlockStored(
        long[] blockHashes,
        boolean hasParent,
        long parentBlockHash,
        int[] tokenIds,
        int blockSize,
        String loraName,
        Long loraId,
        StorageTier tier,
        long[][] mmHashes,
        boolean eagle,
        String cacheSalt)
        implements KvEvent {

    /** A store that names its adapter, if any, by {@code loraName} alone (every producer but old vLLM). */
    public BlockStored(
            long[] blockHashes,
            boolean hasParent,
            long parentBlockHash,
            int[] tokenIds,
            int blockSize,
            String loraName,
            StorageTier tier,
            long[][] mmHashes,
            boolean eagle) {
        this(blockHashes, hasParent, parentBlockHash, tokenIds, blockSize, loraName, null, tier, mmHashes, eagle, null);
    }

    /**
     * The seed of this store's local hashes: the base model's, the named adapter's (what a query with that {@code
     * lora_name} hashes with), or, for an adapter known by its id alone, one no query can hash with. The engine keeps
     * an adapter's blocks apart from the base model's even for equal tokens, so a base-model query must not match
     * them, and a query cannot name an adapter by its id. {@code salt} (with {@code --mix-cache-salt}: this store's
     * own or the one its parent was stored with; else null) is mixed in as a query's {@code cache_salt} is.
     */
    public long seed(String salt) {
        return loraName == null && loraId != null
                ? BlockHasher.unnamedAdapterSeed(loraId)
                : BlockHasher.seed(loraName, salt, true);
    }

    /**
     * A store that names blocks by engine hash only, without tokens ({@code token_ids} empty and
     * {@code block_size} 0): llm-d's shared-storage publisher, vLLM's CPU offload without self-describing events.
     * Its blocks cannot be hashed; the index can only attach them to blocks an engine's store already made known.
     */
    public boolean hashesOnly() {
        return blockHashes != null
                && blockHashes.length > 0
                && (tokenIds == null || tokenIds.length == 0)
                && blockSize == 0;
    }

    /**
     * Blocks of another size than an index of {@code indexBlockSize} tokens: a store that index refuses (its blocks
     * cannot be hashed as the index's); a hash-only store has no size to differ.
     */
    public boolean blockSizeDiffers(int indexBlockSize) {
        return !hashesOnly() && blockHashes.length > 0 && blockSize != indexBlockSize;
    }

    /**
     * One block narrower than the index's: what vLLM publishes for a hybrid model's partial prefix-cache entry (PR
     * #45939: {@code hash_block_size < block_size}; e.g. 32, 64 or 96 tokens of a 128-token block), removed again
     * when it is promoted to a full block. Not indexable by a block-size index, but no sign that the engine was
     * registered with a wrong size once its full blocks have come at the index's size.
     */
    public boolean partialEntry(int indexBlockSize) {
        return blockHashes.length == 1 && blockSize > 0 && blockSize < indexBlockSize;
    }
}
