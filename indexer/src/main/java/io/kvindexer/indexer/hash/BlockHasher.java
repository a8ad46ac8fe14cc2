package io.kvindexer.indexer.hash;

import com.dynatrace.hash4j.hashing.Hasher64;
import com.dynatrace.hash4j.hashing.Hashing;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Local block hashes: XXH3-64 over one block of token ids written as little-endian u32, with a seed of
 * 1337 plus the optional LoRA and cache-salt terms (Dynamo's compute_block_hash, compatibility.md, Hashing).
 *
 * <p>Hashes are independent per block; prefix identity comes from the index's parent chaining, not from here.
 * All values are raw 64-bit patterns; print them with {@link Long#toUnsignedString(long)}.
 */
public final class BlockHasher {

    /** Dynamo's XXH3 seed for block hashes. */
    public static final long BASE_SEED = 1337L;

    private static final Hasher64 LORA_TERM = Hashing.xxh3_64(0L);
    private static final Hasher64 SALT_TERM = Hashing.xxh3_64(1L);
    /** a term of its own seed: no adapter name's term (seed 0) can equal an id's but by a 64-bit collision */
    private static final Hasher64 LORA_ID_TERM = Hashing.xxh3_64(2L);

    private static final Hasher64 BASE_HASHER = Hashing.xxh3_64(BASE_SEED);

    // A seeded XXH3 hasher derives its own 192-byte secret when built, which costs more than hashing one block:
    // keep the hashers of the seeds in use (base model + LoRA adapters), bounded against unbounded adapter names.
    private static final int MAX_CACHED_SEEDS = 4096;
    private static final ConcurrentHashMap<Long, Hasher64> SEEDED = new ConcurrentHashMap<>();

    private static final VarHandle INT_LE = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LONG_LE =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[4096]);
    /** How many bytes of tokens {@link #localHashes} converts at a time. */
    private static final int CHUNK_BYTES = 16 * 1024;

    private BlockHasher() {}

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

    /**
     * The seed of an adapter's blocks when its engine names it by vLLM's numeric {@code lora_id} alone: 1337 plus
     * XXH3-64 of the id as a little-endian u64 under seed 2. No {@code lora_name} of a query hashes with it, as no query
     * can name that adapter; blocks of two ids stay apart, and apart from the base model's.
     */
    public static long unnamedAdapterSeed(long loraId) {
        byte[] id = new byte[Long.BYTES];
        LONG_LE.set(id, 0, loraId);
        return BASE_SEED + LORA_ID_TERM.hashBytesToLong(id);
    }

    /** XXH3-64 of raw bytes with a seed (used for the spec's sanity vector and the sequence-hash fixture). */
    public static long xxh3(byte[] bytes, long seed) {
        return hasher(seed).hashBytesToLong(bytes);
    }

    /** The XXH3-64 hasher of a seed, reused across calls (hashers are immutable and thread-safe). */
    static Hasher64 hasher(long seed) {
        if (seed == BASE_SEED) {
            return BASE_HASHER;
        }
        Hasher64 cached = SEEDED.get(seed);
        if (cached != null) {
            return cached;
        }
        Hasher64 created = Hashing.xxh3_64(seed);
        if (SEEDED.size() < MAX_CACHED_SEEDS) {
            SEEDED.putIfAbsent(seed, created);
        }
        return created;
    }

    /**
     * How many tokens one block's local hash covers: {@code blockSize}, or one more with EAGLE, whose bigram keys
     * reach into the next block's first token (compatibility.md, Hashing). Windows advance by {@code blockSize}.
     */
    public static long window(int blockSize, boolean eagle) {
        return eagle ? blockSize + 1L : blockSize;
    }

    /**
     * How many whole windows {@code tokens} tokens hold: {@code floor(n / B)}, or {@code floor((n - 1) / B)} with
     * EAGLE (a trailing partial window is dropped); 0 when {@code blockSize <= 0}. Queries and engine events both
     * count blocks here.
     */
    public static int blocks(int tokens, int blockSize, boolean eagle) {
        if (blockSize <= 0) {
            return 0;
        }
        long past = tokens - (window(blockSize, eagle) - blockSize); // the last window's extra token needs room
        return past < 0 ? 0 : (int) (past / blockSize);
    }

    /**
     * Local hashes of every full block of {@code tokens}; a trailing partial block is dropped.
     * An empty array when {@code blockSize <= 0}.
     */
    public static long[] localHashes(int[] tokens, int blockSize, long seed) {
        return localHashes(IntBuffer.wrap(tokens), blockSize, false, seed);
    }

    /** The same over EAGLE windows when {@code eagle} ({@link #window}). */
    public static long[] localHashes(int[] tokens, int blockSize, boolean eagle, long seed) {
        return localHashes(IntBuffer.wrap(tokens), blockSize, eagle, seed);
    }

    /**
     * The same for the tokens between {@code tokens}' position and limit: an array's, or a view of little-endian
     * u32 bytes (a msgpack bin in a request body), read where they lie.
     */
    public static long[] localHashes(IntBuffer tokens, int blockSize, boolean eagle, long seed) {
        int blocks = blocks(tokens.remaining(), blockSize, eagle);
        long[] out = new long[blocks];
        if (blocks == 0) {
            return out;
        }
        Hasher64 hasher = hasher(seed);
        // many blocks' tokens turned into little-endian bytes by one bulk copy (a plain memory copy on a
        // little-endian CPU), then each window hashed where it lies: no per-token stores, no per-block scratch
        // look-up. An EAGLE window's extra token is the next block's first, so a chunk copies one token more.
        int extra = (int) (window(blockSize, eagle) - blockSize);
        int blockBytes = blockSize * 4;
        int windowBytes = blockBytes + extra * 4;
        int perChunk = Math.max(1, CHUNK_BYTES / blockBytes);
        byte[] buf = scratch(perChunk * blockBytes + extra * 4);
        IntBuffer le = ByteBuffer.wrap(buf).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer();
        for (int b = 0; b < blocks; b += perChunk) {
            int n = Math.min(perChunk, blocks - b);
            le.put(0, tokens, tokens.position() + b * blockSize, n * blockSize + extra);
            for (int i = 0; i < n; i++) {
                out[b + i] = hasher.hashBytesToLong(buf, i * blockBytes, windowBytes);
            }
        }
        return out;
    }

    /**
     * The local hash of {@code length} tokens starting at {@code offset}, followed (when present) by the
     * block's multimodal hashes as u64 little-endian, sorted ascending (compatibility.md, Hashing, multimodal blocks).
     */
    public static long hashBlock(int[] tokens, int offset, int length, long seed, long[] mmHashes) {
        return hashBlock(hasher(seed), tokens, offset, length, mmHashes);
    }

    private static long hashBlock(Hasher64 hasher, int[] tokens, int offset, int length, long[] mmHashes) {
        int mm = mmHashes == null ? 0 : mmHashes.length;
        int size = length * 4 + mm * 8;
        byte[] buf = scratch(size);
        int p = 0;
        for (int i = offset, end = offset + length; i < end; i++, p += 4) {
            INT_LE.set(buf, p, tokens[i]);
        }
        if (mm > 0) {
            long[] sorted = mmHashes.clone();
            sortUnsigned(sorted);
            for (long h : sorted) {
                LONG_LE.set(buf, p, h);
                p += 8;
            }
        }
        return hasher.hashBytesToLong(buf, 0, size);
    }

    /** This thread's scratch of at least {@code size} bytes. */
    private static byte[] scratch(int size) {
        byte[] buf = SCRATCH.get();
        if (buf.length < size) {
            buf = new byte[Math.max(size, buf.length * 2)];
            SCRATCH.set(buf);
        }
        return buf;
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
