package io.kvindexer.indexer.bench;

import io.kvindexer.indexer.hash.BlockHasher;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;

/**
 * The least work any indexer must do for the workload's ops, run single-threaded as fast as it can in the same
 * process: synthesise and hash each block's tokens (queries and Stored, with the same {@link BlockHasher} the
 * index uses) and do one primitive hash-map operation per block hash (a probe per query block, a put per stored
 * block, a remove per removed block). {@code achieved / floor} is the ratio that survives a noisy machine.
 */
public final class Floor {

    /** What one pass measured; {@code members} is the map's final size (the memberships a correct index holds). */
    public record Result(long elapsedNanos, long members, long checksum) {
    }

    private Floor() {
    }

    public static Result run(Workload workload) {
        int blockSize = workload.spec().blockSize();
        Long2LongOpenHashMap members = new Long2LongOpenHashMap();
        long checksum = 0;
        long start = System.nanoTime();
        for (Workload.Op op : workload.ops()) {
            switch (op.kind()) {
                case QUERY -> {
                    long[] hashes = BlockHasher.localHashes(Workload.tokens(op.tokenValues(), blockSize), blockSize,
                            BlockHasher.BASE_SEED);
                    for (long h : hashes) {
                        checksum += members.get(h);
                    }
                }
                case STORED -> {
                    long[] hashes = BlockHasher.localHashes(Workload.tokens(op.tokenValues(), blockSize), blockSize,
                            BlockHasher.BASE_SEED);
                    long[] seq = op.seqHashes();
                    for (int i = 0; i < seq.length; i++) {
                        members.put(key(op.worker(), seq[i]), hashes[i]);
                    }
                }
                case REMOVED -> {
                    for (long s : op.seqHashes()) {
                        checksum += members.remove(key(op.worker(), s));
                    }
                }
            }
        }
        long elapsed = System.nanoTime() - start;
        return new Result(elapsed, members.size(), checksum);
    }

    private static long key(int worker, long seqHash) {
        return seqHash ^ (worker + 1L) * 0x9E3779B97F4A7C15L;
    }
}
