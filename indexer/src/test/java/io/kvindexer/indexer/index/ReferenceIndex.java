package io.kvindexer.indexer.index;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.hash.BlockHasher;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The index semantics written as plainly as possible (boxed maps, brute-force matching), to check the real one
 * against. Single-threaded. Assumes a (parent, local) pair never names two blocks (true for chained hashes).
 */
final class ReferenceIndex {

    record Node(boolean hasParent, long parent, long local) {}

    record Membership(WorkerKey worker, StorageTier tier, long block) {}

    private final int blockSize;
    final Map<Long, Node> nodes = new HashMap<>();
    final Set<Membership> memberships = new HashSet<>();
    /** per block, how many memberships name it: a block goes when its last one does */
    private final Map<Long, Integer> holders = new HashMap<>();

    ReferenceIndex(int blockSize) {
        this.blockSize = blockSize;
    }

    void apply(WorkerKey worker, KvEvent event) {
        switch (event) {
            case BlockStored s -> store(worker, s);
            case BlockRemoved r -> {
                for (long h : r.blockHashes()) {
                    if (memberships.remove(new Membership(worker, r.tier(), h))) {
                        released(h);
                    }
                }
            }
            case AllBlocksCleared c -> removeIf(m -> m.worker().equals(worker));
        }
    }

    void removeInstance(long instance) {
        removeIf(m -> m.worker().instanceId() == instance);
    }

    void removeWorker(WorkerKey worker) {
        removeIf(m -> m.worker().equals(worker));
    }

    private void removeIf(java.util.function.Predicate<Membership> doomed) {
        memberships.removeIf(m -> {
            if (doomed.test(m)) {
                released(m.block());
                return true;
            }
            return false;
        });
    }

    private void released(long block) {
        if (holders.merge(block, -1, Integer::sum) == 0) {
            holders.remove(block);
            nodes.remove(block);
        }
    }

    private void store(WorkerKey worker, BlockStored s) {
        long[] hashes = s.blockHashes();
        Set<Long> distinct = new HashSet<>();
        for (long h : hashes) {
            if (!distinct.add(h) || (s.hasParent() && h == s.parentBlockHash())) {
                return;
            }
        }
        if (s.blockSize() != blockSize) {
            return;
        }
        if (s.tier() == StorageTier.DEVICE
                && s.hasParent()
                && !memberships.contains(new Membership(worker, StorageTier.DEVICE, s.parentBlockHash()))) {
            return;
        }
        boolean hasParent = s.hasParent();
        long parent = s.parentBlockHash();
        for (int i = 0; i < hashes.length && (i + 1) * blockSize <= s.tokenIds().length; i++) {
            long local = BlockHasher.hashBlock(s.tokenIds(), i * blockSize, blockSize, BlockHasher.seed(null), null);
            nodes.putIfAbsent(hashes[i], new Node(hasParent, parent, local));
            if (memberships.add(new Membership(worker, s.tier(), hashes[i]))) {
                holders.merge(hashes[i], 1, Integer::sum);
            }
            hasParent = true;
            parent = hashes[i];
        }
    }

    /** Tiered match by brute force: per worker, per tier, follow the (unique) held child at each position. */
    Map<WorkerKey, MatchResult.WorkerMatch> match(long[] query) {
        Set<WorkerKey> workers = new HashSet<>();
        memberships.forEach(m -> workers.add(m.worker()));
        Map<WorkerKey, MatchResult.WorkerMatch> out = new HashMap<>();
        for (WorkerKey w : workers) {
            long[] state = {0, 0, 0}; // pos, hasNode, node
            run(w, StorageTier.DEVICE, query, state);
            int device = (int) state[0];
            run(w, StorageTier.HOST_PINNED, query, state);
            int host = (int) state[0];
            run(w, StorageTier.DISK, query, state);
            run(w, StorageTier.EXTERNAL, query, state);
            int disk = (int) state[0];
            if (disk > 0) {
                out.put(w, new MatchResult.WorkerMatch(w, device, host, disk));
            }
        }
        return out;
    }

    private void run(WorkerKey w, StorageTier tier, long[] query, long[] state) {
        while (state[0] < query.length) {
            boolean fromRoot = state[1] == 0;
            long parent = state[2];
            long local = query[(int) state[0]];
            Long next = null;
            for (Membership m : memberships) {
                if (m.worker().equals(w) && m.tier() == tier) {
                    Node n = nodes.get(m.block());
                    if (n.local() == local && n.hasParent() == !fromRoot && (fromRoot || n.parent() == parent)) {
                        next = m.block();
                        break;
                    }
                }
            }
            if (next == null) {
                return;
            }
            state[0]++;
            state[1] = 1;
            state[2] = next;
        }
    }

    /** The dump as a set (event ids left out), to compare with {@link DumpRoundTripTest.Entry}. */
    Set<DumpRoundTripTest.Entry> entries() {
        Set<DumpRoundTripTest.Entry> out = new HashSet<>();
        for (Membership m : memberships) {
            Node n = nodes.get(m.block());
            out.add(new DumpRoundTripTest.Entry(
                    m.worker().instanceId(),
                    m.worker().dpRank(),
                    m.tier(),
                    n.hasParent(),
                    n.hasParent() ? n.parent() : 0,
                    m.block(),
                    n.local()));
        }
        return out;
    }
}
