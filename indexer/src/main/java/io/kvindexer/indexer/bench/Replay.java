package io.kvindexer.indexer.bench;

import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.event.StorageTier;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.index.WorkerKey;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One open-loop replay of a {@link Workload} against a fresh index: one issuer thread waits for each op's deadline,
 * then runs a query inline (hash the synthesised tokens, {@code findMatches}) or submits an event without waiting
 * (the index's writer threads apply it). The clock stops when the last op has been issued and a final
 * {@code flush()} has completed, i.e. when every query and every event has been applied (drain included).
 */
public final class Replay {

    /** Apply latency is sampled on every this-many-th event, through a {@code flush()} barrier (an upper bound). */
    static final int APPLY_SAMPLE_EVERY = 64;

    /**
     * @param elapsedNanos  issue + drain
     * @param lookup        {@code findMatches} service time per query
     * @param apply         submit → visible (flush barrier completed), sampled
     * @param memberships   the index's memberships at the end
     * @param heapBytes     used heap after a full GC with the index loaded, minus the same before it was created
     * @param maxLagNanos   how far the issuer fell behind its deadlines at worst
     */
    public record Result(long elapsedNanos, Latencies lookup, Latencies apply, long memberships, long heapBytes,
                         long maxLagNanos) {
    }

    private Replay() {
    }

    public static Result run(Workload workload, double windowMs, int threads, boolean measureHeap) {
        Workload.Op[] ops = workload.ops();
        int blockSize = workload.spec().blockSize();
        long[] deadlines = workload.deadlines(windowMs);
        WorkerKey[] keys = new WorkerKey[workload.spec().workers()];
        for (int w = 0; w < keys.length; w++) {
            keys[w] = new WorkerKey(w + 1L, 0);
        }
        long[] lookups = new long[(int) workload.queries()];
        long[] applies = new long[ops.length / APPLY_SAMPLE_EVERY + 1];
        AtomicInteger appliesCount = new AtomicInteger();
        List<CompletableFuture<Void>> sampled = new ArrayList<>(applies.length);
        long baseline = measureHeap ? HeapMeter.usedAfterGc() : 0;

        try (Indexers indexers = new Indexers(new IndexOptions(false, threads))) {
            ModelIndex index = indexers.getOrCreate("bench-model", "default", blockSize);
            int q = 0;
            int events = 0;
            long maxLag = 0;
            long sink = 0;
            long start = System.nanoTime();
            for (int i = 0; i < ops.length; i++) {
                long lag = waitUntil(start + deadlines[i]);
                maxLag = Math.max(maxLag, lag);
                Workload.Op op = ops[i];
                switch (op.kind()) {
                    case QUERY -> {
                        long[] hashes = index.localHashes(Workload.tokens(op.tokenValues(), blockSize), null, null);
                        long t0 = System.nanoTime();
                        sink += index.findMatches(hashes).workers().size();
                        lookups[q++] = System.nanoTime() - t0;
                    }
                    case STORED, REMOVED -> {
                        index.submit(keys[op.worker()], List.of(toEvent(op, blockSize)));
                        if (++events % APPLY_SAMPLE_EVERY == 0) {
                            long t0 = System.nanoTime();
                            sampled.add(index.flush().thenRun(() ->
                                    applies[appliesCount.getAndIncrement()] = System.nanoTime() - t0));
                        }
                    }
                }
            }
            index.flush().join();
            long elapsed = System.nanoTime() - start;
            CompletableFuture.allOf(sampled.toArray(CompletableFuture[]::new)).join();
            sampled.clear();
            long memberships = index.stats().memberships();
            long heap = measureHeap ? HeapMeter.usedAfterGc() - baseline : 0;
            if (sink < 0) {
                throw new AssertionError("unreachable; keeps the lookups alive");
            }
            return new Result(elapsed, new Latencies(lookups, q), new Latencies(applies, appliesCount.get()),
                    memberships, heap, maxLag);
        } catch (Indexers.BlockSizeMismatchException e) {
            throw new IllegalStateException(e);
        }
    }

    static KvEvent toEvent(Workload.Op op, int blockSize) {
        return switch (op.kind()) {
            case STORED -> new BlockStored(op.seqHashes(), op.hasParent(), op.parent(),
                    Workload.tokens(op.tokenValues(), blockSize), blockSize, null, StorageTier.DEVICE, null, false);
            case REMOVED -> new BlockRemoved(op.seqHashes(), StorageTier.DEVICE);
            case QUERY -> throw new IllegalArgumentException("a query is not an event");
        };
    }

    /** Parks or spins until {@code deadline}; returns how late we already were (0 when on time). */
    private static long waitUntil(long deadline) {
        long now = System.nanoTime();
        if (now >= deadline) {
            return now - deadline;
        }
        while ((now = System.nanoTime()) < deadline) {
            long ahead = deadline - now;
            if (ahead > 200_000) {
                LockSupport.parkNanos(ahead - 100_000);
            } else {
                Thread.onSpinWait();
            }
        }
        return 0;
    }
}
