package io.kvindexer.bench;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.sim.EngineSimulator;
import io.kvindexer.indexer.sim.SimEvent;
import it.unimi.dsi.fastutil.longs.Long2LongOpenHashMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.zeromq.ZContext;

/**
 * One engine stand-in of the soak: an {@link EngineSimulator} (its PUB and replay ROUTER, its ground truth) driven
 * like a vLLM engine with prefix caching and an LMCache-style CPU tier. The device tier is an LRU of a fixed number
 * of blocks: a request stores the blocks past the longest prefix it holds (chained to the last held one) and evicts
 * the least recently used beyond capacity. Every block stored on the device is also stored on the host tier, which
 * never removes (LMCache publishes no removals): only the indexer's TTL bounds it there.
 */
final class SoakEngine implements AutoCloseable {

    final long instanceId;
    final EngineSimulator sim;
    private final int blockSize;
    private final int capacity;
    /** device blocks, least recently used first */
    private final LinkedHashMap<Long, Boolean> device = new LinkedHashMap<>(1024, 0.75f, true);
    /** host-tier block → when it was last stored (ms): what a TTL check may expect to be gone */
    private final Long2LongOpenHashMap hostStoredAt = new Long2LongOpenHashMap();

    private CompletableFuture<Long> last = CompletableFuture.completedFuture(null);

    SoakEngine(long instanceId, int blockSize, int capacity, ZContext context) {
        this.instanceId = instanceId;
        this.blockSize = blockSize;
        this.capacity = capacity;
        this.sim = EngineSimulator.start(
                EngineSimulator.Options.builder().context(context).build());
    }

    /** Serves one request of trace block ids: one batch (device store, host store, evictions). */
    void serve(long[] ids, boolean dropLive) {
        int[] tokens = new int[ids.length * blockSize];
        for (int i = 0; i < ids.length; i++) {
            Arrays.fill(tokens, i * blockSize, (i + 1) * blockSize, (int) ids[i]);
        }
        long[] hashes = EngineSimulator.sequenceHashes(tokens, blockSize, null);
        int held = 0;
        while (held < hashes.length && device.get(hashes[held]) != null) { // get: marks it used
            held++;
        }
        if (held == hashes.length) {
            return;
        }
        long[] fresh = Arrays.copyOfRange(hashes, held, hashes.length);
        int[] freshTokens = Arrays.copyOfRange(tokens, held * blockSize, tokens.length);
        Long parent = held == 0 ? null : hashes[held - 1];
        long now = System.currentTimeMillis();
        for (long h : fresh) {
            device.put(h, Boolean.TRUE);
            hostStoredAt.put(h, now);
        }
        List<SimEvent> events = new ArrayList<>(3);
        events.add(EngineSimulator.stored(fresh, parent, freshTokens, blockSize, "GPU", null));
        events.add(EngineSimulator.stored(fresh, parent, freshTokens, blockSize, "CPU", null));
        int over = device.size() - capacity;
        if (over > 0) {
            long[] evicted = new long[over];
            var it = device.keySet().iterator();
            for (int i = 0; i < over; i++) {
                evicted[i] = it.next();
                it.remove();
            }
            events.add(EngineSimulator.removed(evicted, "GPU"));
        }
        if (dropLive) {
            sim.dropLive(1); // buffered for replay, not sent: the indexer sees a gap at the next batch
        }
        last = sim.publish(events);
    }

    /** A new engine process at the same address: seq from 0, empty cache and replay buffer. */
    void restart() {
        sim.restart();
        device.clear();
        hostStoredAt.clear();
    }

    /** The engine empties its cache and says so (AllBlocksCleared). */
    void clearCache() {
        device.clear();
        hostStoredAt.clear();
        last = sim.publish(EngineSimulator.cleared());
    }

    /** An empty batch: reveals a dropped last batch as a gap, so it is replayed before a check. */
    void ping() throws Exception {
        last = sim.publish(List.of());
        last.get(30, TimeUnit.SECONDS);
    }

    /** What the index must hold for this engine on {@code tier}. */
    Set<Long> truth(StorageTier tier) {
        return sim.held(0, tier);
    }

    /** Host blocks stored within the last {@code ms}: they must still be in the index under a TTL of more. */
    Set<Long> hostStoredWithin(long ms) {
        long since = System.currentTimeMillis() - ms;
        Set<Long> out = new HashSet<>();
        hostStoredAt.long2LongEntrySet().removeIf(e -> {
            if (e.getLongValue() >= since) {
                out.add(e.getLongKey());
                return false;
            }
            return true; // older than the window: no longer needed for any check
        });
        return out;
    }

    @Override
    public void close() {
        sim.close();
    }
}
