package io.kvindexer.indexer.index;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The map (model, tenant) → {@link ModelIndex}. The first registration fixes an index's block size. Every index
 * shares one {@link IndexWriters} pool, owned (and closed) here.
 */
public final class Indexers implements AutoCloseable {

    /** Thrown when an index exists with another block size. */
    public static final class BlockSizeMismatchException extends Exception {
        private final int existing;

        public BlockSizeMismatchException(int existing, int requested, String model, String tenant) {
            super("block_size mismatch for model=" + model + " tenant=" + tenant + ": existing=" + existing
                    + ", requested=" + requested);
            this.existing = existing;
        }

        public int existing() {
            return existing;
        }
    }

    private record Key(String model, String tenant) {}

    private static final Comparator<ModelIndex> ORDER =
            Comparator.comparing(ModelIndex::modelName).thenComparing(ModelIndex::tenantId);

    private final IndexOptions options;
    private final IndexWriters writers;
    private final AppliedOps observer;
    private final ConcurrentHashMap<Key, ModelIndex> indexes = new ConcurrentHashMap<>();
    /** the event counts of the dropped indexes; also the lock that makes a drop and {@link #appliedTotals} atomic */
    private final Map<String, Map<String, Long>> retired = new TreeMap<>();
    /** told of every failed write no listener delivered, in any index of this map ({@link #onFailedWrite}) */
    private volatile Consumer<FailedWrite> failedWrites = failure -> {};

    /** Whether queries mix their {@code cache_salt} into the hash seed ({@code --mix-cache-salt}, Dynamo G3). */
    public boolean mixCacheSalt() {
        return options.mixCacheSalt();
    }

    public Indexers(IndexOptions options) {
        this(options, null);
    }

    /** With {@code observer} (null: none) told of every change applied to any index of this map. */
    public Indexers(IndexOptions options, AppliedOps observer) {
        this.options = options;
        this.writers = new IndexWriters(options.writerThreads());
        this.observer = observer;
    }

    public ModelIndex getOrCreate(String model, String tenant, int blockSize) throws BlockSizeMismatchException {
        ModelIndex index = indexes.computeIfAbsent(
                new Key(model, tenant),
                k -> new ModelIndex(model, tenant, blockSize, options, writers, observer, this::writeFailed));
        if (index.blockSize() != blockSize) {
            throw new BlockSizeMismatchException(index.blockSize(), blockSize, model, tenant);
        }
        return index;
    }

    /**
     * Who owns the workers' streams (the registry) hears here of every write of any index of this map that failed
     * with no listener to tell (recovery's adopt, a reattach, block expiry), on the writer thread, before the index
     * drops the worker's blocks (the writers count and log it after): it must not wait for anything that waits for
     * the writers.
     */
    public void onFailedWrite(Consumer<FailedWrite> hook) {
        failedWrites = Objects.requireNonNull(hook, "hook");
    }

    private void writeFailed(FailedWrite failure) {
        failedWrites.accept(failure);
    }

    /** A new index with this map's options and writers that is not in the map: peer recovery stages into it. */
    public ModelIndex detached(String model, String tenant, int blockSize) {
        return new ModelIndex(model, tenant, blockSize, options, writers);
    }

    public Optional<ModelIndex> get(String model, String tenant) {
        return Optional.ofNullable(indexes.get(new Key(model, tenant)));
    }

    /**
     * Whether a dump of these indexes carries last-store times (some tier has a TTL): a snapshot without them stays in
     * the version before store times, which a replica of that version can still read after a rollback.
     */
    public boolean keepsStoreTimes() {
        return observer != null && observer.keepsStoreTimes();
    }

    /** Drops an index (after its last worker is unregistered); its event counts stay in {@link #appliedTotals}. */
    public void remove(String model, String tenant) {
        ModelIndex removed;
        synchronized (retired) {
            removed = indexes.remove(new Key(model, tenant));
            if (removed != null) {
                addApplied(retired, removed.stats().applied());
            }
        }
        if (removed != null && observer != null) {
            observer.indexDropped(removed);
        }
    }

    /**
     * The events applied to every index this map has held, live or dropped (type → status → count): monotonic
     * while the process lives, as a metric summed over the indexes must be (a dropped index's counts would
     * otherwise vanish from the sum and read as a counter reset).
     */
    public Map<String, Map<String, Long>> appliedTotals() {
        Map<String, Map<String, Long>> sum = new TreeMap<>();
        synchronized (retired) {
            addApplied(sum, retired);
            indexes.values().forEach(ix -> addApplied(sum, ix.stats().applied()));
        }
        return sum;
    }

    private static void addApplied(Map<String, Map<String, Long>> into, Map<String, Map<String, Long>> counts) {
        counts.forEach((type, byStatus) -> byStatus.forEach(
                (status, n) -> into.computeIfAbsent(type, t -> new TreeMap<>()).merge(status, n, Long::sum)));
    }

    /** Every index, ordered by model then tenant. */
    public List<ModelIndex> all() {
        return indexes.values().stream().sorted(ORDER).toList();
    }

    /** Index writes that threw (each one logged with its stack trace): zero unless the index has a bug. */
    public long writeFailures() {
        return writers.failures();
    }

    /** Completes when every write submitted to any index before this call has been applied. */
    public CompletableFuture<Void> flushAll() {
        return writers.barrier();
    }

    @Override
    public void close() {
        writers.close();
    }
}
