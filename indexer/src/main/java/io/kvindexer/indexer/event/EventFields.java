package io.kvindexer.indexer.event;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.hash.MultimodalHashes;
import java.util.List;

/**
 * The fields of the one event being decoded, whatever its encoding (tagged array, tagged map, or either packed in
 * a {@code bin}), and the rules that turn them into a {@link KvEvent} or a reason to skip it. Reset per event;
 * owned by one decode call.
 */
final class EventFields {

    long[] blockHashes;
    boolean hasParent;
    long parentHash;
    int[] tokenIds;
    /** entries of the wire's {@code token_ids} array (bigram pairs count once) */
    int tokenEntries;

    boolean eagle;
    /** index in {@link #tokenIds} of the first token that is not a number (TensorRT-LLM's str ids), or -1 */
    int opaqueTokenAt;

    int blockSize;
    String medium;
    String loraName;
    /** vLLM's deprecated {@code lora_id} when a positive integer (a raw 64-bit pattern), else null */
    Long loraId;
    /** vLLM's {@code extra_keys}, per block (null entries for blocks without) */
    List<List<MultimodalHashes.Key>> extraKeys;
    /** TensorRT-LLM's {@code mm_keys}, per block */
    List<List<MultimodalHashes.Key>> mmKeys;
    /** Dynamo's {@code block_mm_infos}: the u64 multimodal hashes per block, ready to mix in */
    long[][] blockMmInfos;
    /** SGLang's {@code cache_salt} (its map key, or the metadata map in the lora_name slot) */
    String cacheSalt;

    Long groupIdx;
    String specKind;
    String locality;
    String ownership;
    /** positional tail: slots (group, kind, window, locality, ownership) filled or passed so far */
    int tailSlot;

    void reset() {
        blockHashes = null;
        hasParent = false;
        parentHash = 0;
        tokenIds = null;
        tokenEntries = 0;
        eagle = false;
        opaqueTokenAt = -1;
        blockSize = -1;
        medium = null;
        loraName = null;
        loraId = null;
        extraKeys = null;
        mmKeys = null;
        blockMmInfos = null;
        cacheSalt = null;
        groupIdx = null;
        specKind = null;
        locality = null;
        ownership = null;
        tailSlot = 0;
    }

    /**
     * Why this store or remove is not indexed, or null to index it. A store that names both its group and kind
     * teaches the stream that group's kind first, so the group's later removals follow it.
     */
    EventWarning skipReason(CacheGroups groups, boolean store) {
        if (ownership != null) {
            return EventWarning.OWNERSHIP;
        }
        // exactly LOCAL, as Dynamo reads it: anything else may be a copy this engine does not hold
        if (locality != null && !locality.equals("LOCAL")) {
            return EventWarning.NON_LOCAL;
        }
        if (store && groupIdx != null && specKind != null) {
            groups.learn(groupIdx, specKind);
        }
        if (!groups.admits(specKind, groupIdx)) {
            return EventWarning.SKIPPED_CACHE_GROUP;
        }
        if (store && tokenEntries > 0 && (long) tokenEntries != (long) blockHashes.length * blockSize) {
            return EventWarning.SPARSE_SPAN;
        }
        return null;
    }

    /** A clear that carries an ownership domain clears that domain, not the engine's own blocks. */
    EventWarning clearSkipReason() {
        return ownership != null ? EventWarning.OWNERSHIP : null;
    }

    boolean unknownMedium() {
        return StorageTier.isUnknownMedium(medium);
    }

    BlockStored stored() {
        String lora = loraName == null || loraName.isEmpty() ? null : loraName;
        int[] tokens = tokenIds;
        if (opaqueTokenAt >= 0) {
            // blocks from the one holding a non-numeric token on cannot be hashed: the index stores the prefix
            tokens = java.util.Arrays.copyOf(tokenIds, opaqueTokenAt);
        }
        boolean parent = hasParent;
        if (parent && parentHash == 0 && tokenEntries == 0 && blockSize == 0) {
            parent = false; // llm-d's storage publisher writes 0 for "no parent" on its hash-only stores
        }
        return new BlockStored(
                blockHashes,
                parent,
                parent ? parentHash : 0,
                tokens,
                blockSize,
                lora,
                lora == null ? loraId : null, // a name says which adapter; an id alone still says it is one
                StorageTier.fromMedium(medium),
                mmHashes(lora),
                eagle,
                cacheSalt());
    }

    /** Prefix of the {@code extra_keys} entry that carries a request's cache salt (Dynamo's vLLM integration). */
    static final String TAGGED_SALT = "dynamo-cache-salt:";

    /**
     * The store's cache salt: SGLang's field, else an {@code extra_keys} entry {@code dynamo-cache-salt:<salt>}
     * (vLLM puts a request's salt among the first block's extra keys; Dynamo tags it so that it is told from a LoRA
     * name or another string). An untagged string is no salt, and an empty salt is none.
     */
    private String cacheSalt() {
        if (cacheSalt != null && !cacheSalt.isEmpty()) {
            return cacheSalt;
        }
        if (extraKeys != null) {
            for (List<MultimodalHashes.Key> keys : extraKeys) {
                if (keys == null) {
                    continue;
                }
                for (MultimodalHashes.Key key : keys) {
                    if (!key.tuple()
                            && key.text().startsWith(TAGGED_SALT)
                            && key.text().length() > TAGGED_SALT.length()) {
                        return key.text().substring(TAGGED_SALT.length());
                    }
                }
            }
        }
        return null;
    }

    BlockRemoved removed() {
        return new BlockRemoved(blockHashes, StorageTier.fromMedium(medium));
    }

    /** Per block, the multimodal hashes to mix into its local hash; null when no block has any. */
    private long[][] mmHashes(String lora) {
        if (blockMmInfos != null) {
            return fit(blockMmInfos);
        }
        if (extraKeys == null && mmKeys == null) {
            return null;
        }
        long[][] out = null;
        for (int b = 0; b < blockHashes.length; b++) {
            long[] hashes = MultimodalHashes.concat(
                    extraKeys != null && b < extraKeys.size() ? MultimodalHashes.ofBlock(extraKeys.get(b), lora) : null,
                    mmKeys != null && b < mmKeys.size() ? MultimodalHashes.ofBlock(mmKeys.get(b), null) : null);
            if (hashes != null) {
                if (out == null) {
                    out = new long[blockHashes.length][];
                }
                out[b] = hashes;
            }
        }
        return out;
    }

    /** Dynamo's per-block infos cut or padded to one entry per block; null when none has a hash. */
    private long[][] fit(long[][] perBlock) {
        long[][] out = null;
        for (int b = 0; b < Math.min(perBlock.length, blockHashes.length); b++) {
            if (perBlock[b] != null && perBlock[b].length > 0) {
                if (out == null) {
                    out = new long[blockHashes.length][];
                }
                out[b] = perBlock[b];
            }
        }
        return out;
    }
}
