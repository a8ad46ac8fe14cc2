package io.kvindexer.bench;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One open-loop replay of a {@link Workload} against a fresh index. {@code issuers} threads share the workers
 * (worker {@code w} belongs to issuer {@code w % issuers}, so each worker's ops stay in order); each waits for its
 * ops' deadlines, then runs a query inline (hash the tokens, {@code findMatches}) or submits an event without
 * waiting (the index hashes it on the submitting thread, as a listener thread would, and its writer threads apply
 * it). The clock stops when every issuer is done and a final {@code flush()} has completed, i.e. when every query
 * and every event has been applied (drain included).
 */
public final class Replay {

    /** Apply latency is sampled on every this-many-th event of an issuer, through a {@code flush()} barrier. */
    static final int APPLY_SAMPLE_EVERY = 64;

    /**
     * @param elapsedNanos  issue + drain
     * @param lookup        {@code findMatches} service time per query (hashing excluded)
     * @param apply         submit → visible (the flush barrier after it completed), sampled: an upper bound
     * @param memberships   the index's memberships at the end
     * @param heapBytes     used heap after a full GC with the index loaded, minus the same before it was created
     * @param maxLagNanos   how far an issuer fell behind its deadlines at worst
     * @param idleLookup    every query again after the replay, one thread, no writes: the lookup's own cost on the
     *                      final index, without lock waits or competing threads (hashing excluded)
     * @param named         per query (in op order), how many workers the final index's answer names (the answer
     *                      floor's size, see {@link ProbeFloor})
     * @param writerOnCpu   the writer threads' CPU time over the window's, per thread: below 1 the writer waited
     *                      (for work, a lock or a core) and was not what bounded the achieved rate
     * @param issuerOnCpu   the same for the issuers (queries, the submit path, the bench's own loop)
     */
    public record Result(
            long elapsedNanos,
            Latencies lookup,
            Latencies apply,
            long memberships,
            long heapBytes,
            long maxLagNanos,
            Latencies idleLookup,
            int[] named,
            double writerOnCpu,
            double issuerOnCpu) {}

    private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

    private Replay() {}

    public static Result run(Workload workload, double windowMs, int threads, int issuers, boolean measureHeap)
            throws InterruptedException {
        return run(workload, windowMs, threads, issuers, measureHeap, false);
    }

    /**
     * @param prehashed queries and events carry local hashes computed before the replay, as in Dynamo's harness
     *                  (its RouterEvents carry {@code tokens_hash}): queries call {@code findMatches} directly and
     *                  events go in as recovered RouterEvents ({@code RouterEventOps}), so token hashing is not timed
     */
    public static Result run(
            Workload workload, double windowMs, int threads, int issuers, boolean measureHeap, boolean prehashed)
            throws InterruptedException {
        return run(workload, windowMs, threads, issuers, measureHeap, prehashed, null, null);
    }

    /**
     * The same replay with the paced answer floor timed at each query's deadline instead of the lookup
     * ({@link ProbeFloor}): {@link Result#lookup} holds the floor's samples. The writer applies the same events.
     *
     * @param named per query (in op order), how many workers the real answer names ({@link Result#named} of a
     *              lookup replay)
     */
    public static Result runFloor(
            Workload workload,
            double windowMs,
            int threads,
            int issuers,
            boolean prehashed,
            ProbeFloor floor,
            int[] named)
            throws InterruptedException {
        return run(workload, windowMs, threads, issuers, false, prehashed, floor, named);
    }

    private static Result run(
            Workload workload,
            double windowMs,
            int threads,
            int issuers,
            boolean measureHeap,
            boolean prehashed,
            ProbeFloor floor,
            int[] answers)
            throws InterruptedException {
        Workload.Op[] ops = workload.ops();
        long[][] local = prehashed || floor != null ? workload.localHashes() : null;
        int[] ordinal = new int[ops.length]; // a query's place among the queries, in op order
        for (int k = 0, n = 0; k < ops.length; k++) {
            ordinal[k] = ops[k].kind() == Workload.Kind.QUERY ? n++ : -1;
        }
        int blockSize = workload.spec().blockSize();
        long[] deadlines = workload.deadlines(windowMs);
        WorkerKey[] keys = new WorkerKey[workload.spec().workers()];
        for (int w = 0; w < keys.length; w++) {
            keys[w] = new WorkerKey(w + 1L, 0);
        }
        long[] lookups = new long[(int) workload.queries()];
        AtomicInteger lookupCount = new AtomicInteger();
        long[] applies = new long[ops.length / APPLY_SAMPLE_EVERY + issuers];
        AtomicInteger applyCount = new AtomicInteger();
        long[] maxLag = new long[issuers];
        long[] issuerCpu = new long[issuers];
        List<List<CompletableFuture<Void>>> sampled = new ArrayList<>();
        for (int i = 0; i < issuers; i++) {
            sampled.add(new ArrayList<>(applies.length / issuers + 1));
        }
        long baseline = measureHeap ? HeapMeter.usedAfterGc() : 0;

        // one shard per writer thread: writers never share a lock (IndexOptions#shards)
        try (Indexers indexers = new Indexers(new IndexOptions(false, threads, threads))) {
            ModelIndex index = indexers.getOrCreate("bench-model", "default", blockSize);
            long writerCpuBefore = cpuNanos(writerThreadIds()); // threads start with their first task: often none yet
            long start = System.nanoTime() + 2_000_000; // every issuer is parked on its first deadline by then
            List<Thread> running = new ArrayList<>();
            for (int i = 0; i < issuers; i++) {
                int me = i;
                running.add(Thread.ofPlatform().name("issuer-" + i).start(() -> {
                    long cpuBefore = CPU.getCurrentThreadCpuTime();
                    long sink = 0;
                    int events = 0;
                    List<CompletableFuture<Void>> mine = sampled.get(me);
                    for (int k = 0; k < ops.length; k++) {
                        Workload.Op op = ops[k];
                        if (op.worker() % issuers != me) {
                            continue;
                        }
                        maxLag[me] = Math.max(maxLag[me], waitUntil(start + deadlines[k]));
                        if (op.kind() == Workload.Kind.QUERY && floor != null) {
                            long t0 = System.nanoTime();
                            sink += floor.probe(local[k], answers[ordinal[k]]);
                            lookups[lookupCount.getAndIncrement()] = System.nanoTime() - t0;
                        } else if (op.kind() == Workload.Kind.QUERY) {
                            long[] hashes = prehashed ? local[k] : index.localHashes(op.tokens(), null, null);
                            long t0 = System.nanoTime();
                            sink += index.findMatches(hashes).workers().size();
                            lookups[lookupCount.getAndIncrement()] = System.nanoTime() - t0;
                        } else {
                            if (prehashed) {
                                io.kvindexer.indexer.recovery.RouterEventOps.submit(
                                        index, List.of(toRouterEvent(op, keys[op.worker()], local[k])));
                            } else {
                                index.submit(keys[op.worker()], List.of(toEvent(op, blockSize)));
                            }
                            if (++events % APPLY_SAMPLE_EVERY == 0) {
                                long t0 = System.nanoTime();
                                mine.add(index.flush()
                                        .thenRun(() -> applies[applyCount.getAndIncrement()] = System.nanoTime() - t0));
                            }
                        }
                    }
                    if (sink < 0) {
                        throw new AssertionError("unreachable; keeps the lookups from being optimised away");
                    }
                    issuerCpu[me] = CPU.getCurrentThreadCpuTime() - cpuBefore;
                }));
            }
            for (Thread t : running) {
                t.join();
            }
            index.flush().join();
            long elapsed = System.nanoTime() - start;
            long[] writers = writerThreadIds();
            double writerOnCpu = (double) (cpuNanos(writers) - writerCpuBefore) / elapsed / threads;
            long issuersCpu = 0;
            for (long c : issuerCpu) {
                issuersCpu += c;
            }
            double issuerOnCpu = (double) issuersCpu / elapsed / issuers;
            for (List<CompletableFuture<Void>> mine : sampled) {
                CompletableFuture.allOf(mine.toArray(CompletableFuture[]::new)).join();
                mine.clear();
            }
            long memberships = index.stats().memberships();
            long heap = measureHeap ? HeapMeter.usedAfterGc() - baseline : 0;
            int[] named = new int[(int) workload.queries()];
            Latencies idle = idleLookups(index, ops, local, named);
            long lag = 0;
            for (long l : maxLag) {
                lag = Math.max(lag, l);
            }
            return new Result(
                    elapsed,
                    new Latencies(lookups, lookupCount.get()),
                    new Latencies(applies, applyCount.get()),
                    memberships,
                    heap,
                    lag,
                    idle,
                    named,
                    writerOnCpu,
                    issuerOnCpu);
        } catch (Indexers.BlockSizeMismatchException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The live writer threads ({@code IndexWriters} names them {@code index-writer-N}): the replay's own, since each
     * replay closes its writers (and waits for their threads) before the next begins.
     */
    private static long[] writerThreadIds() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("index-writer-"))
                .mapToLong(Thread::threadId)
                .toArray();
    }

    private static long cpuNanos(long[] threadIds) {
        long sum = 0;
        for (long id : threadIds) {
            sum += Math.max(0, CPU.getThreadCpuTime(id));
        }
        return sum;
    }

    private static Latencies idleLookups(ModelIndex index, Workload.Op[] ops, long[][] local, int[] named) {
        long[] out = new long[ops.length];
        int n = 0;
        long sink = 0;
        for (int k = 0; k < ops.length; k++) {
            if (ops[k].kind() == Workload.Kind.QUERY) {
                long[] hashes = local != null ? local[k] : index.localHashes(ops[k].tokens(), null, null);
                long t0 = System.nanoTime();
                int size = index.findMatches(hashes).workers().size();
                out[n] = System.nanoTime() - t0;
                named[n++] = size;
                sink += size;
            }
        }
        if (sink < 0) {
            throw new AssertionError("unreachable");
        }
        return new Latencies(out, n);
    }

    static KvEvent toEvent(Workload.Op op, int blockSize) {
        return switch (op.kind()) {
            case STORED ->
                new BlockStored(
                        op.seqHashes(),
                        op.hasParent(),
                        op.parent(),
                        op.tokens(),
                        blockSize,
                        null,
                        StorageTier.DEVICE,
                        null,
                        false);
            case REMOVED -> new BlockRemoved(op.seqHashes(), StorageTier.DEVICE);
            case QUERY -> throw new IllegalArgumentException("a query is not an event");
        };
    }

    static RouterEvent toRouterEvent(Workload.Op op, WorkerKey worker, long[] localHashes) {
        RouterEvent.Data data = switch (op.kind()) {
            case STORED -> new RouterEvent.Stored(op.hasParent(), op.parent(), op.seqHashes(), localHashes);
            case REMOVED -> new RouterEvent.Removed(op.seqHashes());
            case QUERY -> throw new IllegalArgumentException("a query is not an event");
        };
        return new RouterEvent(worker.instanceId(), worker.dpRank(), StorageTier.DEVICE, 0, data);
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
