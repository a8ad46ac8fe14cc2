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
 * The index semantics written as plainly as possible (boxed maps), to check the real one against. Single-threaded.
 * Assumes a worker never holds two blocks under one (parent, local) pair on a tier (true for chained hashes); a match
 * throws if one does.
 */
final class ReferenceIndex {

    record Node(boolean hasParent, long parent, long local) {}

    record Membership(WorkerKey worker, StorageTier tier, long block) {}

    private final int blockSize;
    final Map<Long, Node> nodes = new HashMap<>();
    final Set<Membership> memberships = new HashSet<>();
    /** per block, how many memberships name it: a block goes when its last one does */
    private final Map<Long, Integer> holders = new HashMap<>();
    /** what {@link #match} follows; null after a change */
    private Map<WorkerKey, Map<ChildKey, Long>> heldChildren;

    private record ChildKey(StorageTier tier, boolean hasParent, long parent, long local) {}

    ReferenceIndex(int blockSize) {
        this.blockSize = blockSize;
    }

    void apply(WorkerKey worker, KvEvent event) {
        heldChildren = null;
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
        heldChildren = null;
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

    /** Tiered match: per worker, per tier, follow the (unique) held child at each position. */
    Map<WorkerKey, MatchResult.WorkerMatch> match(long[] query) {
        Map<WorkerKey, MatchResult.WorkerMatch> out = new HashMap<>();
        for (WorkerKey w : heldChildren().keySet()) {
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
        Map<ChildKey, Long> children = heldChildren().get(w);
        while (state[0] < query.length) {
            boolean atNode = state[1] != 0;
            Long next = children.get(new ChildKey(tier, atNode, atNode ? state[2] : 0, query[(int) state[0]]));
            if (next == null) {
                return;
            }
            state[0]++;
            state[1] = 1;
            state[2] = next;
        }
    }

    /** Per worker, its held blocks by (tier, parent, local hash): built when a match needs it after a change. */
    private Map<WorkerKey, Map<ChildKey, Long>> heldChildren() {
        if (heldChildren == null) {
            heldChildren = new HashMap<>();
            for (Membership m : memberships) {
                Node n = nodes.get(m.block());
                ChildKey key = new ChildKey(m.tier(), n.hasParent(), n.hasParent() ? n.parent() : 0, n.local());
                Long before = heldChildren
                        .computeIfAbsent(m.worker(), w -> new HashMap<>())
                        .put(key, m.block());
                if (before != null) {
                    throw new IllegalStateException(m.worker() + " holds two blocks under one (parent, local): " + key);
                }
            }
        }
        return heldChildren;
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
