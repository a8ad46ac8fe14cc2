package io.kvindexer.indexer.hash;

/**
 * Dynamo's own chained sequence hash (compatibility.md, Hashing): {@code seq[0] = local[0]},
 * {@code seq[i] = XXH3(u64_le(seq[i-1]) || u64_le(local[i]), 1337)}.
 *
 * <p>The indexer never needs it (engines send their own opaque sequence hashes); tests, the engine simulator
 * and the benchmark use it to invent engine block hashes that chain like a real engine's.
 */
public final class SequenceHasher {

    private SequenceHasher() {}

    public static long[] sequenceHashes(long[] localHashes) {
        long[] out = new long[localHashes.length];
        for (int i = 0; i < localHashes.length; i++) {
            out[i] = i == 0 ? localHashes[0] : next(out[i - 1], localHashes[i]);
        }
        return out;
    }

    public static long next(long parentSequenceHash, long localHash) {
        byte[] buf = new byte[16];
        for (int s = 0; s < 64; s += 8) {
            buf[s / 8] = (byte) (parentSequenceHash >>> s);
            buf[8 + s / 8] = (byte) (localHash >>> s);
        }
        return BlockHasher.xxh3(buf, BlockHasher.BASE_SEED);
    }
}
