package io.kvindexer.bench;

import io.kvindexer.indexer.hash.BlockHasher;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.util.ArrayList;
import java.util.List;

/**
 * The least work any indexer must do for the workload's ops, run as fast as it can in the same process on as many
 * threads as the replay has issuers (worker {@code w} on thread {@code w % threads}, each thread with its own map):
 * hash each block's tokens (queries and Stored, with the same {@link BlockHasher} the index uses) and do one
 * primitive hash-map operation per block hash (a probe per query block, a put per stored block, a remove per
 * removed block). {@code achieved / floor} is the ratio that survives a noisy machine.
 */
public final class Floor {

    /** What one pass measured; {@code members} is the maps' final size (the memberships a correct index holds). */
    public record Result(long elapsedNanos, long members, long checksum) {}

    private Floor() {}

    public static Result run(Workload workload) {
        try {
            return run(workload, 1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public static Result run(Workload workload, int threads) throws InterruptedException {
        return run(workload, threads, false);
    }

    /** @param prehashed use the workload's precomputed local hashes: map operations only (Dynamo-comparable mode) */
    public static Result run(Workload workload, int threads, boolean prehashed) throws InterruptedException {
        long[][] local = prehashed ? workload.localHashes() : null;
        long[] members = new long[threads];
        long[] checksums = new long[threads];
        List<Thread> running = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < threads; i++) {
            int me = i;
            running.add(Thread.ofPlatform().name("floor-" + i).start(() -> {
                Long2LongOpenHashMap map = new Long2LongOpenHashMap();
                checksums[me] = pass(workload, me, threads, map, local);
                members[me] = map.size();
            }));
        }
        for (Thread t : running) {
            t.join();
        }
        long elapsed = System.nanoTime() - start;
        long total = 0;
        long checksum = 0;
        for (int i = 0; i < threads; i++) {
            total += members[i];
            checksum += checksums[i];
        }
        return new Result(elapsed, total, checksum);
    }

    private static long pass(Workload workload, int me, int threads, Long2LongOpenHashMap members, long[][] local) {
        int blockSize = workload.spec().blockSize();
        long checksum = 0;
        Workload.Op[] ops = workload.ops();
        for (int k = 0; k < ops.length; k++) {
            Workload.Op op = ops[k];
            if (op.worker() % threads != me) {
                continue;
            }
            switch (op.kind()) {
                case QUERY -> {
                    long[] hashes = local != null
                            ? local[k]
                            : BlockHasher.localHashes(op.tokens(), blockSize, BlockHasher.BASE_SEED);
                    for (long h : hashes) {
                        checksum += members.get(h);
                    }
                }
                case STORED -> {
                    long[] hashes = local != null
                            ? local[k]
                            : BlockHasher.localHashes(op.tokens(), blockSize, BlockHasher.BASE_SEED);
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
        return checksum;
    }

    private static long key(int worker, long seqHash) {
        return seqHash ^ (worker + 1L) * 0x9E3779B97F4A7C15L;
    }
}
