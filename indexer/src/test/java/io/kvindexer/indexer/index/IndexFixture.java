package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.dump.RouterEvent;
import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.hash.BlockHasher;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A small index with helpers to write events as a test reads them. A block's content is named by an int c:
 * its tokens are {@code blockSize} copies of c, so equal contents have equal local hashes at any position.
 */
final class IndexFixture implements AutoCloseable {

    final int blockSize;
    final IndexWriters writers;
    final ModelIndex index;

    IndexFixture(int blockSize) {
        this(blockSize, 2);
    }

    /** As many shards as writer threads: every rule must hold however workers are spread over shards. */
    IndexFixture(int blockSize, int threads) {
        this(blockSize, threads, threads);
    }

    IndexFixture(int blockSize, int threads, int shards) {
        this(blockSize, threads, new IndexOptions(false, IndexOptions.DEFAULT_WRITER_THREADS, shards));
    }

    /** An index with these options (say, {@code --mix-cache-salt}), on as many writer threads as they name. */
    IndexFixture(int blockSize, IndexOptions options) {
        this(blockSize, options.writerThreads(), options);
    }

    private IndexFixture(int blockSize, int threads, IndexOptions options) {
        this.blockSize = blockSize;
        this.writers = new IndexWriters(threads);
        this.index = new ModelIndex("m", "default", blockSize, options, writers);
    }

    static WorkerKey w(long instance, int rank) {
        return new WorkerKey(instance, rank);
    }

    int[] tokens(int... contents) {
        int[] out = new int[contents.length * blockSize];
        for (int b = 0; b < contents.length; b++) {
            for (int t = 0; t < blockSize; t++) {
                out[b * blockSize + t] = contents[b];
            }
        }
        return out;
    }

    long[] local(int... contents) {
        return index.localHashes(tokens(contents), null, null);
    }

    BlockStored storedEvent(StorageTier tier, Long parent, long[] seq, int... contents) {
        return new BlockStored(
                seq,
                parent != null,
                parent == null ? 0L : parent,
                tokens(contents),
                blockSize,
                null,
                tier,
                null,
                false);
    }

    /** Submits one Stored and waits until it is applied. */
    void store(WorkerKey worker, StorageTier tier, Long parent, long[] seq, int... contents) {
        submit(worker, storedEvent(tier, parent, seq, contents));
    }

    void store(WorkerKey worker, Long parent, long[] seq, int... contents) {
        store(worker, StorageTier.DEVICE, parent, seq, contents);
    }

    void remove(WorkerKey worker, StorageTier tier, long... seq) {
        submit(worker, new BlockRemoved(seq, tier));
    }

    void remove(WorkerKey worker, long... seq) {
        remove(worker, StorageTier.DEVICE, seq);
    }

    void clear(WorkerKey worker) {
        submit(worker, new AllBlocksCleared());
    }

    void submit(WorkerKey worker, KvEvent... events) {
        index.submit(worker, List.of(events));
        flush();
    }

    void recovered(RouterEvent... events) {
        io.kvindexer.indexer.recovery.RouterEventOps.submit(index, List.of(events));
        flush();
    }

    /** A RouterEvent Stored with explicit local hashes (Dynamo's hash-level tests use small integers). */
    static RouterEvent routerStored(
            long instance, int rank, StorageTier tier, Long parent, long[] seq, long[] localHashes) {
        return new RouterEvent(
                instance,
                rank,
                tier,
                0,
                new RouterEvent.Stored(parent != null, parent == null ? 0 : parent, seq, localHashes));
    }

    void flush() {
        index.flush().orTimeout(60, TimeUnit.SECONDS).join();
    }

    Map<WorkerKey, MatchResult.WorkerMatch> match(int... contents) {
        return byWorker(index.findMatches(local(contents)));
    }

    Map<WorkerKey, MatchResult.WorkerMatch> matchHashes(long... localHashes) {
        return byWorker(index.findMatches(localHashes));
    }

    static Map<WorkerKey, MatchResult.WorkerMatch> byWorker(MatchResult result) {
        return result.workers().stream()
                .collect(Collectors.toMap(MatchResult.WorkerMatch::worker, Function.identity()));
    }

    /** Device blocks matched per worker (workers with none absent). */
    Map<WorkerKey, Integer> deviceScores(int... contents) {
        return deviceScores(null, contents);
    }

    /** The same for a query that sends {@code cacheSalt}. */
    Map<WorkerKey, Integer> deviceScores(String cacheSalt, int... contents) {
        return byWorker(index.findMatches(index.localHashes(tokens(contents), null, cacheSalt))).values().stream()
                .filter(m -> m.deviceBlocks() > 0)
                .collect(Collectors.toMap(MatchResult.WorkerMatch::worker, MatchResult.WorkerMatch::deviceBlocks));
    }

    long applied(String type, ApplyStatus status) {
        return index.stats().applied().get(type).get(status.label());
    }

    static long seedOf(String lora) {
        return BlockHasher.seed(lora);
    }

    @Override
    public void close() {
        writers.close();
    }
}
