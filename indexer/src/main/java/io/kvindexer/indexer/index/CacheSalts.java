package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockStored;
import it.unimi.dsi.fastutil.longs.Long2ObjectMap;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * With {@code --mix-cache-salt} (Dynamo G3's salt rules): the cache salt each worker's salted blocks were stored
 * with, by engine hash. vLLM names a request's salt only among its first block's extra keys, so a later store that
 * hangs under a salted block is salted with its parent's salt, as a query with that salt hashes every block.
 *
 * <p>Kept per (instance, rank) and bounded: a worker past {@link #MAX_PER_WORKER} salted blocks starts again, as
 * does one cleared, removed or restarted. Snapshots and peer dumps carry them (binary dump version 5), so a replica
 * that restarts keeps them with the blocks. A store whose parent's salt is not known (after a reset above, or a
 * recovery from a source without them) is indexed unsalted: a query with the salt then matches less, never a block
 * it should not.
 */
public final class CacheSalts {

    /** Receives one worker's blocks stored with one salt; the array is the receiver's to keep. */
    @FunctionalInterface
    public interface Sink {
        void salts(WorkerKey worker, String salt, long[] blockHashes);
    }

    static final int MAX_PER_WORKER = 1 << 20;

    private final ConcurrentHashMap<WorkerKey, Long2ObjectOpenHashMap<String>> byWorker = new ConcurrentHashMap<>();

    /**
     * The salt to hash {@code store} with: its own, else its parent's, else null; remembered for its blocks. A
     * hash-only store (a lower tier's copy of blocks stored before) is hashed with nothing and changes nothing here,
     * as in Dynamo's normalizer.
     */
    String forStore(WorkerKey worker, BlockStored store) {
        if (store.hashesOnly()) {
            return null;
        }
        String salt = store.cacheSalt();
        Long2ObjectOpenHashMap<String> known = byWorker.get(worker);
        if (salt == null && store.hasParent() && known != null) {
            synchronized (known) {
                salt = known.get(store.parentBlockHash());
            }
        }
        if (salt != null) {
            remember(worker, salt, store.blockHashes());
        }
        return salt;
    }

    /** Remembers {@code salt} for the blocks (a store's, or what a snapshot or a peer's dump carried). */
    void remember(WorkerKey worker, String salt, long[] blockHashes) {
        Long2ObjectOpenHashMap<String> known = byWorker.computeIfAbsent(worker, w -> new Long2ObjectOpenHashMap<>());
        synchronized (known) {
            if (known.size() + blockHashes.length > MAX_PER_WORKER) {
                known.clear();
            }
            for (long hash : blockHashes) {
                known.put(hash, salt);
            }
        }
    }

    /** Every worker's salted blocks, a salt at a time. */
    void each(Sink sink) {
        byWorker.forEach((worker, known) -> each(worker, known, sink));
    }

    /** One worker's salted blocks, a salt at a time. */
    void each(WorkerKey worker, Sink sink) {
        Long2ObjectOpenHashMap<String> known = byWorker.get(worker);
        if (known != null) {
            each(worker, known, sink);
        }
    }

    private static void each(WorkerKey worker, Long2ObjectOpenHashMap<String> known, Sink sink) {
        Map<String, LongArrayList> bySalt = new HashMap<>();
        synchronized (known) {
            for (Long2ObjectMap.Entry<String> b : known.long2ObjectEntrySet()) {
                bySalt.computeIfAbsent(b.getValue(), salt -> new LongArrayList())
                        .add(b.getLongKey());
            }
        }
        bySalt.forEach((salt, hashes) -> sink.salts(worker, salt, hashes.toLongArray()));
    }

    /** The worker's engine cleared its cache, restarted or left: its salts go with its blocks. */
    void forget(WorkerKey worker) {
        byWorker.remove(worker);
    }

    void forgetInstance(long instanceId) {
        byWorker.keySet().removeIf(w -> w.instanceId() == instanceId);
    }

    /** Salted blocks known for {@code worker} (for tests). */
    int size(WorkerKey worker) {
        Long2ObjectOpenHashMap<String> known = byWorker.get(worker);
        if (known == null) {
            return 0;
        }
        synchronized (known) {
            return known.size();
        }
    }
}
