package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockStored;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * With {@code --mix-cache-salt} (Dynamo G3's salt rules): the cache salt each worker's salted blocks were stored
 * with, by engine hash. vLLM names a request's salt only among its first block's extra keys, so a later store that
 * hangs under a salted block is salted with its parent's salt, as a query with that salt hashes every block.
 *
 * <p>Kept in memory only, per (instance, rank), and bounded: a worker past {@link #MAX_PER_WORKER} salted blocks
 * starts again, as does one cleared, removed or restarted. A store whose parent's salt is not known (after that, or
 * after a replica restart, which recovers the blocks but not their salts) is indexed unsalted: a query with the
 * salt then matches less, never a block it should not.
 */
final class CacheSalts {

    static final int MAX_PER_WORKER = 1 << 20;

    private final ConcurrentHashMap<WorkerKey, Long2ObjectOpenHashMap<String>> byWorker = new ConcurrentHashMap<>();

    /** The salt to hash {@code store} with: its own, else its parent's, else null; remembered for its blocks. */
    String forStore(WorkerKey worker, BlockStored store) {
        String salt = store.cacheSalt();
        Long2ObjectOpenHashMap<String> known = byWorker.get(worker);
        if (salt == null && store.hasParent() && known != null) {
            synchronized (known) {
                salt = known.get(store.parentBlockHash());
            }
        }
        if (salt != null) {
            known = byWorker.computeIfAbsent(worker, w -> new Long2ObjectOpenHashMap<>());
            synchronized (known) {
                if (known.size() + store.blockHashes().length > MAX_PER_WORKER) {
                    known.clear();
                }
                for (long hash : store.blockHashes()) {
                    known.put(hash, salt);
                }
            }
        }
        return salt;
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
