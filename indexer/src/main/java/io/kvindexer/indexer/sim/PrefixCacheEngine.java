package io.kvindexer.indexer.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * A tiny model of an engine's prefix cache: a fixed number of GPU blocks, least-recently-used eviction.
 * {@link #serve} tells what one request does to the cache as KV events, in the order vLLM's block pool emits
 * them (an eviction that makes room precedes the store that needs it). Not thread-safe.
 */
public final class PrefixCacheEngine {

    /**
     * What serving one request did.
     *
     * @param hitBlocks full blocks found in the cache (the longest cached prefix)
     * @param events    Removed events for evictions, then one Stored for the newly cached blocks; empty when
     *                  nothing changed
     */
    public record Served(int hitBlocks, int totalBlocks, List<SimEvent> events) {}

    private final int capacityBlocks;
    private final int blockSize;
    private final String medium;
    /** Cached engine hashes in LRU order (eldest first); the value is unused. */
    private final LinkedHashMap<Long, Boolean> cache;

    public PrefixCacheEngine(int capacityBlocks, int blockSize) {
        this(capacityBlocks, blockSize, "GPU");
    }

    public PrefixCacheEngine(int capacityBlocks, int blockSize, String medium) {
        if (capacityBlocks < 1 || blockSize < 1) {
            throw new IllegalArgumentException("capacityBlocks and blockSize must be >= 1");
        }
        this.capacityBlocks = capacityBlocks;
        this.blockSize = blockSize;
        this.medium = medium;
        this.cache = new LinkedHashMap<>(capacityBlocks * 2, 0.75f, true);
    }

    public int blockSize() {
        return blockSize;
    }

    public int cachedBlocks() {
        return cache.size();
    }

    public boolean holds(long hash) {
        return cache.containsKey(hash);
    }

    /**
     * Serves one request: touches its cached prefix, evicts least-recently-used blocks as needed and caches
     * its remaining full blocks (at most {@code capacityBlocks} of them; a longer prompt keeps only its head).
     */
    public Served serve(int[] tokens) {
        long[] hashes = EngineSimulator.sequenceHashes(tokens, blockSize, null);
        int n = Math.min(hashes.length, capacityBlocks);
        int hit = 0;
        while (hit < n && cache.containsKey(hashes[hit])) {
            cache.get(hashes[hit]); // touch: most recently used
            hit++;
        }
        List<SimEvent> events = new ArrayList<>();
        if (hit == n) {
            return new Served(hit, n, events);
        }
        // blocks of this request beyond the hit prefix that happen to be cached are touched too, so they
        // are not evicted to make room for their own siblings
        for (int i = hit; i < n; i++) {
            cache.get(hashes[i]);
        }
        int missing = 0;
        for (int i = hit; i < n; i++) {
            if (!cache.containsKey(hashes[i])) {
                missing++;
            }
        }
        int toEvict = Math.max(0, cache.size() + missing - capacityBlocks);
        Iterator<Long> eldest = cache.keySet().iterator();
        while (toEvict > 0 && eldest.hasNext()) {
            long victim = eldest.next();
            eldest.remove();
            events.add(SimEvent.removed(new long[] {victim}, medium)); // vLLM: one hash per BlockRemoved
            toEvict--;
        }
        for (int i = hit; i < n; i++) {
            cache.put(hashes[i], Boolean.TRUE);
        }
        Long parent = hit == 0 ? null : hashes[hit - 1];
        events.add(SimEvent.stored(
                Arrays.copyOfRange(hashes, hit, n),
                parent,
                Arrays.copyOfRange(tokens, hit * blockSize, n * blockSize),
                blockSize,
                medium,
                null));
        return new Served(hit, n, events);
    }
}
