package io.kvindexer.indexer.hash;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Local block hashes: XXH3-64 over one block of token ids written as little-endian u32, with a seed of
 * 1337 plus the optional LoRA and cache-salt terms (Dynamo's compute_block_hash, spec §1.2).
 *
 * <p>Hashes are independent per block; prefix identity comes from the index's parent chaining, not from here.
 * All values are raw 64-bit patterns; print them with {@link Long#toUnsignedString(long)}.
 */
public final class BlockHasher {

    /** Dynamo's XXH3 seed for block hashes. */
    public static final long BASE_SEED = 1337L;

    private static final Hasher64 LORA_TERM = Hashing.xxh3_64(0L);
    private static final Hasher64 SALT_TERM = Hashing.xxh3_64(1L);

    private BlockHasher() {
    }

    /**
     * The seed for a request or event.
     *
     * @param loraName   adapter name; null or empty means the base model
     * @param cacheSalt  per-request salt; only mixed in when {@code mixCacheSalt} is true (G3 behaviour)
     * @param mixCacheSalt false reproduces Dynamo G2, which accepts and ignores {@code cache_salt}
     */
    public static long seed(String loraName, String cacheSalt, boolean mixCacheSalt) {
        long seed = BASE_SEED;
        if (loraName != null && !loraName.isEmpty()) {
            seed += LORA_TERM.hashBytesToLong(loraName.getBytes(StandardCharsets.UTF_8));
        }
        if (mixCacheSalt && cacheSalt != null && !cacheSalt.isEmpty()) {
            seed += SALT_TERM.hashBytesToLong(cacheSalt.getBytes(StandardCharsets.UTF_8));
        }
        return seed;
    }

    /** The seed for a LoRA name alone (events never carry a salt term in G2). */
    public static long seed(String loraName) {
        return seed(loraName, null, false);
    }

    /** XXH3-64 of raw bytes with a seed (used for the spec's sanity vector and the sequence-hash fixture). */
    public static long xxh3(byte[] bytes, long seed) {
        return Hashing.xxh3_64(seed).hashBytesToLong(bytes);
    }

    /**
     * Local hashes of every full block of {@code tokens}; a trailing partial block is dropped.
     * An empty array when {@code blockSize <= 0}.
     */
    public static long[] localHashes(int[] tokens, int blockSize, long seed) {
        if (blockSize <= 0) {
            return new long[0];
        }
        int blocks = tokens.length / blockSize;
        long[] out = new long[blocks];
        byte[] scratch = new byte[blockSize * 4];
        Hasher64 hasher = Hashing.xxh3_64(seed);
        for (int b = 0; b < blocks; b++) {
            out[b] = hashBlock(hasher, tokens, b * blockSize, blockSize, null, scratch);
        }
        return out;
    }

    /**
     * The local hash of {@code length} tokens starting at {@code offset}, followed (when present) by the
     * block's multimodal hashes as u64 little-endian, sorted ascending (spec §1.2, multimodal blocks).
     */
    public static long hashBlock(int[] tokens, int offset, int length, long seed, long[] mmHashes) {
        return hashBlock(Hashing.xxh3_64(seed), tokens, offset, length, mmHashes, null);
    }

    private static long hashBlock(Hasher64 hasher, int[] tokens, int offset, int length, long[] mmHashes,
                                  byte[] scratch) {
        int mm = mmHashes == null ? 0 : mmHashes.length;
        int size = length * 4 + mm * 8;
        byte[] buf = scratch != null && scratch.length == size ? scratch : new byte[size];
        int p = 0;
        for (int i = offset, end = offset + length; i < end; i++) {
            int t = tokens[i];
            buf[p++] = (byte) t;
            buf[p++] = (byte) (t >>> 8);
            buf[p++] = (byte) (t >>> 16);
            buf[p++] = (byte) (t >>> 24);
        }
        if (mm > 0) {
            long[] sorted = mmHashes.clone();
            sortUnsigned(sorted);
            for (long h : sorted) {
                for (int s = 0; s < 64; s += 8) {
                    buf[p++] = (byte) (h >>> s);
                }
            }
        }
        return hasher.hashBytesToLong(buf, 0, size);
    }

    private static void sortUnsigned(long[] values) {
        // flip the sign bit so that signed order equals unsigned order, sort, flip back
        for (int i = 0; i < values.length; i++) {
            values[i] ^= Long.MIN_VALUE;
        }
        Arrays.sort(values);
        for (int i = 0; i < values.length; i++) {
            values[i] ^= Long.MIN_VALUE;
        }
    }
}
