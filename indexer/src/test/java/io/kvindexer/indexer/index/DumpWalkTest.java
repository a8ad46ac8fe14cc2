package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import it.unimi.dsi.fastutil.HashCommon;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The chunked dump walk ({@link DumpWalk}) against writes between its chunks: each test fills an index, takes the
 * "watermark" (the position in the log of applied batches), then dumps it in small chunks while random batches of
 * stores, removals and clears are applied between the chunks. The dump must be a valid tree (within a tier a block
 * never before its parent), hold every membership no batch touched during the walk, hold nothing that never
 * existed, and converge: an empty index that takes the dump and then the batches after the watermark ends up equal
 * to the live index. Without writes, the chunked walk emits exactly the one-chunk walk's sequence.
 */
class DumpWalkTest {

    private static final StorageTier[] TIERS = {StorageTier.DEVICE, StorageTier.HOST_PINNED};
    private static final int WORKERS = 4;

    record Entry(WorkerKey worker, StorageTier tier, boolean hasParent, long parent, long block, long local) {
        Membership membership() {
            return new Membership(worker, tier, block);
        }
    }

    record Membership(WorkerKey worker, StorageTier tier, long block) {}

    record Batch(WorkerKey worker, List<IndexOp> ops) {}

    /** Random engine-like batches over a small alphabet (so chains are shared, removed and created again). */
    static final class Writer {
        final Random random;
        final PrefixIndex index = new PrefixIndex(new ApplyCounters());
        final List<Batch> log = new ArrayList<>();
        /** the model of the live memberships, to write only what an engine could (a device parent it holds) */
        final Map<Membership, Long> held = new HashMap<>();
        /** every membership that ever existed, with its block's parent */
        final Set<Membership> ever = new HashSet<>();

        final boolean leavesFirst;

        Writer(long seed, boolean leavesFirst) {
            this.random = new Random(seed);
            this.leavesFirst = leavesFirst;
        }

        void write() {
            WorkerKey worker = new WorkerKey(1 + random.nextInt(WORKERS), 0);
            StorageTier tier = TIERS[random.nextInt(10) < 7 ? 0 : 1];
            int dice = random.nextInt(100);
            List<IndexOp> ops = new ArrayList<>();
            if (dice < 2) {
                ops.add(new IndexOp.Clear());
                held.keySet().removeIf(m -> m.worker().equals(worker));
            } else if (dice < 60) {
                ops.add(store(worker, tier));
            } else {
                List<Membership> mine = held.keySet().stream()
                        .filter(m -> m.worker().equals(worker) && m.tier() == tier)
                        .sorted((a, b) -> Long.compare(a.block(), b.block()))
                        .toList();
                if (mine.isEmpty()) {
                    return;
                }
                Membership victim = mine.get(random.nextInt(mine.size()));
                if (leavesFirst && tier == StorageTier.DEVICE && holdsChildOf(worker, victim.block())) {
                    return; // an engine evicts a request's blocks tail first
                }
                held.remove(victim);
                ops.add(new IndexOp.Remove(tier, new long[] {victim.block()}));
            }
            apply(new Batch(worker, ops));
        }

        private boolean holdsChildOf(WorkerKey worker, long block) {
            for (Map.Entry<Membership, Long> e : held.entrySet()) {
                if (e.getKey().worker().equals(worker)
                        && e.getKey().tier() == StorageTier.DEVICE
                        && e.getValue() != null
                        && e.getValue() == block) {
                    return true;
                }
            }
            return false;
        }

        private IndexOp store(WorkerKey worker, StorageTier tier) {
            boolean hasParent = false;
            long parent = 0;
            List<Membership> mine = held.keySet().stream()
                    .filter(m -> m.worker().equals(worker) && m.tier() == tier)
                    .sorted((a, b) -> Long.compare(a.block(), b.block()))
                    .toList();
            if (tier != StorageTier.DEVICE && random.nextInt(5) == 0) {
                hasParent = true; // a lower tier's block under a parent the index never saw
                parent = 1_000_000 + random.nextInt(20);
            } else if (!mine.isEmpty() && random.nextInt(4) > 0) {
                hasParent = true;
                parent = mine.get(random.nextInt(mine.size())).block();
            }
            int n = 1 + random.nextInt(4);
            long[] blocks = new long[n];
            long[] locals = new long[n];
            long previous = hasParent ? parent : 0;
            for (int i = 0; i < n; i++) {
                int content = random.nextInt(3);
                blocks[i] = HashCommon.mix(previous * 31 + content + 1);
                locals[i] = HashCommon.mix(content + 77L);
                Membership m = new Membership(worker, tier, blocks[i]);
                held.put(m, i > 0 ? Long.valueOf(blocks[i - 1]) : hasParent ? Long.valueOf(parent) : null);
                ever.add(m);
                previous = blocks[i];
            }
            return new IndexOp.Store(
                    tier, hasParent, parent, blocks, locals, ApplyStatus.OK, IndexOp.Store.Source.ENGINE);
        }

        void apply(Batch batch) {
            ApplyStatus[] statuses = new ApplyStatus[batch.ops().size()];
            index.apply(batch.worker(), batch.ops(), KnownBlocks.NONE, statuses);
            for (ApplyStatus status : statuses) {
                if (status == ApplyStatus.PARENT_BLOCK_NOT_FOUND) {
                    throw new AssertionError("the generator writes only what the index accepts: " + batch);
                }
            }
            log.add(batch);
        }
    }

    private static List<Entry> dump(PrefixIndex index, int chunk, Runnable between) {
        List<Entry> out = new ArrayList<>();
        for (StorageTier tier : TIERS) {
            index.dump(
                    tier,
                    (worker, t, hasParent, parent, block, local) ->
                            out.add(new Entry(worker, t, hasParent, parent, block, local)),
                    chunk,
                    between);
        }
        return out;
    }

    private static Set<Entry> state(PrefixIndex index) {
        return new HashSet<>(dump(index, Integer.MAX_VALUE, null));
    }

    @Test
    void withoutWritesTheChunkedWalkEmitsTheOneLockSequence() {
        Writer w = new Writer(7, false);
        for (int i = 0; i < 3_000; i++) {
            w.write();
        }
        List<Entry> whole = dump(w.index, Integer.MAX_VALUE, null);
        assertThat(whole).hasSize((int) w.index.memberships()).hasSizeGreaterThan(150);
        assertThat(dump(w.index, 5, () -> {})).containsExactlyElementsOf(whole);
        assertThat(dump(w.index, DumpWalk.CHUNK, () -> {})).containsExactlyElementsOf(whole);
    }

    @Test
    void aDumpTakenWhileWritersEvictLeavesFirstIsAValidTreeAndConvergesAfterTheReplay() {
        for (long seed = 1; seed <= 8; seed++) {
            check(seed, true);
        }
    }

    @Test
    void aDumpTakenWhileWritersEvictAnyBlockIsAValidTreeHoldingEveryUntouchedMembership() {
        for (long seed = 100; seed <= 108; seed++) {
            check(seed, false);
        }
    }

    private static void check(long seed, boolean leavesFirst) {
        Writer w = new Writer(seed, leavesFirst);
        for (int i = 0; i < 1_500; i++) {
            w.write();
        }
        Set<Entry> atWatermark = state(w.index);
        int watermark = w.log.size();
        int[] steps = {0};
        List<Entry> dump = dump(w.index, 7, () -> {
            steps[0]++;
            for (int k = w.random.nextInt(4); k > 0; k--) {
                w.write();
            }
        });
        List<Batch> after = w.log.subList(watermark, w.log.size());
        assertThat(steps[0])
                .as("seed %d: the walk yielded between chunks", seed)
                .isGreaterThan(50);
        assertThat(after).as("seed %d: writes happened during the walk", seed).isNotEmpty();

        // a valid tree: within a tier, a block that appears never appears after a child of it
        for (StorageTier tier : TIERS) {
            Map<Long, Integer> first = new HashMap<>();
            for (int i = 0; i < dump.size(); i++) {
                if (dump.get(i).tier() == tier) {
                    first.putIfAbsent(dump.get(i).block(), i);
                }
            }
            List<Entry> beforeParent = new ArrayList<>();
            for (int i = 0; i < dump.size(); i++) {
                Entry e = dump.get(i);
                if (e.tier() == tier && e.hasParent() && first.getOrDefault(e.parent(), -1) > i) {
                    beforeParent.add(e);
                }
            }
            assertThat(beforeParent)
                    .as("seed %d: dumped before their parent", seed)
                    .isEmpty();
        }
        // nothing that never existed; everything no batch touched during the walk
        Set<Membership> touched = new HashSet<>();
        Set<WorkerKey> cleared = new HashSet<>();
        for (Batch b : after) {
            for (IndexOp op : b.ops()) {
                switch (op) {
                    case IndexOp.Store s -> {
                        for (long block : s.blockHashes()) {
                            touched.add(new Membership(b.worker(), s.tier(), block));
                        }
                    }
                    case IndexOp.Remove r -> {
                        for (long block : r.blockHashes()) {
                            touched.add(new Membership(b.worker(), r.tier(), block));
                        }
                    }
                    case IndexOp.Clear c -> cleared.add(b.worker());
                }
            }
        }
        Set<Membership> dumped = new HashSet<>();
        List<Entry> neverExisted = new ArrayList<>();
        for (Entry e : dump) {
            dumped.add(e.membership());
            if (!w.ever.contains(e.membership())) {
                neverExisted.add(e);
            }
        }
        assertThat(neverExisted)
                .as("seed %d: dumped memberships that never existed", seed)
                .isEmpty();
        List<Entry> untouchedMissing = new ArrayList<>();
        for (Entry e : atWatermark) {
            if (!touched.contains(e.membership())
                    && !cleared.contains(e.worker())
                    && !dumped.contains(e.membership())) {
                untouchedMissing.add(e);
            }
        }
        assertThat(untouchedMissing)
                .as("seed %d: untouched memberships missing from the dump", seed)
                .isEmpty();
        // per worker, a block without its parent before it is an orphan the reader handles as any other: one that
        // was an orphan at the watermark already, or one whose membership or parent's changed during the walk
        Set<Membership> heldAtWatermark = new HashSet<>();
        atWatermark.forEach(e -> heldAtWatermark.add(e.membership()));
        Set<Membership> before = new HashSet<>();
        List<Entry> unexplainedOrphans = new ArrayList<>();
        for (Entry e : dump) {
            Membership parent = new Membership(e.worker(), e.tier(), e.parent());
            if (e.hasParent()
                    && !before.contains(parent)
                    && heldAtWatermark.contains(parent)
                    && !touched.contains(parent)
                    && !touched.contains(e.membership())
                    && !cleared.contains(e.worker())) {
                unexplainedOrphans.add(e);
            }
            before.add(e.membership());
        }
        assertThat(unexplainedOrphans)
                .as("seed %d: orphaned only by the walk", seed)
                .isEmpty();
        // the dump, then every batch after the watermark, in order
        PrefixIndex restored = new PrefixIndex(new ApplyCounters());
        for (Entry e : dump) {
            restored.apply(
                    e.worker(),
                    List.of(IndexOp.Store.recovered(
                            e.tier(), e.hasParent(), e.parent(), new long[] {e.block()}, new long[] {e.local()})),
                    KnownBlocks.NONE,
                    null);
        }
        for (Batch b : after) {
            restored.apply(b.worker(), b.ops(), KnownBlocks.NONE, null);
        }
        if (leavesFirst) {
            assertThat(state(restored))
                    .as("seed %d: converged after the replay", seed)
                    .isEqualTo(state(w.index));
        } else {
            // a parent evicted during the walk while its child (stored during the walk) stays can leave the restored
            // index short of that child (ADR 0004); it never holds more than the live one
            assertThat(state(w.index)).as("seed %d: restored within live", seed).containsAll(state(restored));
        }
    }
}
