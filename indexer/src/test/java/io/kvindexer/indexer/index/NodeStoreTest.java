package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The node tables under heavy create / free churn (backward-shift deletion, rehash, shared child keys). */
class NodeStoreTest {

    private record Info(boolean hasParent, long parent, long local) {}

    @Test
    void lookupsStayExactUnderRandomChurn() {
        Random random = new Random(7);
        NodeStore store = new NodeStore();
        Map<Long, Info> reference = new HashMap<>();
        Map<Long, Integer> ids = new HashMap<>();
        List<Long> live = new ArrayList<>();
        for (int step = 0; step < 200_000; step++) {
            if (live.isEmpty() || random.nextInt(10) < 6) {
                long seq = random.nextInt(50_000) * 0x10000L; // low bits zero: the table must mix keys
                if (reference.containsKey(seq)) {
                    continue;
                }
                // few parents and locals: many nodes share a (parent, local) child key
                boolean hasParent = random.nextBoolean();
                long parent = hasParent ? random.nextInt(20) : 0;
                long local = random.nextInt(20);
                int node = store.create(seq, hasParent, parent, local);
                assertThat(store.owners().add(node, random.nextInt(1 << 20))).isTrue();
                reference.put(seq, new Info(hasParent, parent, local));
                ids.put(seq, node);
                live.add(seq);
            } else {
                long seq = live.remove(random.nextInt(live.size()));
                int node = ids.remove(seq);
                store.owners().remove(node, store.owners().single(node));
                assertThat(store.owners().count(node)).isZero();
                store.free(node);
                reference.remove(seq);
            }
            if (step % 20_000 == 0) {
                check(store, reference, ids);
            }
        }
        check(store, reference, ids);
    }

    /** A staged store told of far more blocks than came holds the table that growth would have built, no larger. */
    @Test
    void aStaleBlockCountCostsNoTableMemoryOnceStaged() {
        NodeStore hinted = new NodeStore();
        NodeStore grown = new NodeStore();
        hinted.deferPrefixes();
        grown.deferPrefixes();
        hinted.expectBlocks(1_000_000);
        assertThat(hinted.byBlockHashCapacity()).isGreaterThan(1_000_000);
        for (int i = 0; i < 5_000; i++) {
            for (NodeStore store : List.of(hinted, grown)) {
                int node = store.create(i + 1, i > 0, i, 7 * i);
                store.owners().add(node, 3);
            }
        }
        hinted.indexPrefixes();
        grown.indexPrefixes();
        assertThat(hinted.byBlockHashCapacity())
                .isEqualTo(grown.byBlockHashCapacity())
                .isLessThan(10_000);
        for (int i = 0; i < 5_000; i++) {
            assertThat(hinted.findByBlockHash(i + 1)).isEqualTo(i);
        }
    }

    /** A block count no heap could hold is sized for no more than the hint's cap, and the store still works. */
    @Test
    void anAbsurdBlockCountIsCapped() {
        NodeStore hinted = new NodeStore();
        hinted.deferPrefixes();
        hinted.expectBlocks(Integer.MAX_VALUE);
        assertThat((long) hinted.byBlockHashCapacity()).isLessThanOrEqualTo(4 * NodeStore.HINTED_BLOCKS_MAX);
        int node = hinted.create(1, false, 0, 7);
        hinted.owners().add(node, 3);
        hinted.indexPrefixes();
        assertThat(hinted.findByBlockHash(1)).isEqualTo(node);
    }

    private static void check(NodeStore store, Map<Long, Info> reference, Map<Long, Integer> ids) {
        assertThat(store.liveCount()).isEqualTo(reference.size());
        reference.forEach((seq, info) -> {
            int node = store.findByBlockHash(seq);
            assertThat(node).isEqualTo(ids.get(seq));
            assertThat(store.localHash(node)).isEqualTo(info.local());
        });
        assertThat(store.findByBlockHash(123L)).isEqualTo(NodeStore.NONE);
        // every (parent, local) key lists exactly the live nodes with that key
        Map<Info, List<Integer>> expected = new HashMap<>();
        reference.forEach((seq, info) ->
                expected.computeIfAbsent(info, k -> new ArrayList<>()).add(ids.get(seq)));
        IntArrayList children = new IntArrayList();
        expected.forEach((key, nodes) -> {
            store.children(key.hasParent(), key.parent(), key.local(), children);
            assertThat((List<Integer>) children).as("children of %s", key).containsExactlyInAnyOrderElementsOf(nodes);
        });
        store.children(true, 12345, 1, children);
        assertThat((List<Integer>) children).isEmpty();
    }

    @Test
    void ownerSetsGrowAndShrink() {
        NodeStore store = new NodeStore();
        int node = store.create(1, false, 0, 5);
        for (int code = 0; code < 300; code++) {
            assertThat(store.owners().add(node, code)).isTrue();
        }
        assertThat(store.owners().add(node, 17)).isFalse();
        assertThat(store.owners().count(node)).isEqualTo(300);
        for (int code = 0; code < 300; code += 2) {
            assertThat(store.owners().remove(node, code)).isTrue();
        }
        assertThat(store.owners().remove(node, 0)).isFalse();
        assertThat(store.owners().count(node)).isEqualTo(150);
        for (int code = 1; code < 300; code += 2) {
            assertThat(store.owners().contains(node, code)).isTrue();
            assertThat(store.owners().contains(node, code - 1)).isFalse();
        }
        boolean[] slots = new boolean[100];
        slots[0] = true; // codes 1 and 3 (slot 0, tiers 1 and 3)
        long[] removedPerTier = new long[4];
        store.owners().removeSlots(node, slots, removedPerTier);
        assertThat(removedPerTier[1] + removedPerTier[3]).isEqualTo(2);
        assertThat(store.owners().count(node)).isEqualTo(148);
    }

    /** {@code [count, o1, ..., o_count]} when the node has two owners or more (a shared list), else null. */
    private static int[] ownerList(NodeStore store, int node) {
        int count = store.owners().count(node);
        if (count < 2) {
            return null;
        }
        int[] codes = new int[count];
        store.owners().codes(node, codes);
        int[] list = new int[count + 1];
        list[0] = count;
        System.arraycopy(codes, 0, list, 1, count);
        return list;
    }

    @Test
    void ownersMoveBetweenTheInlineWordAndSharedLists() {
        NodeStore store = new NodeStore();
        int a = store.create(1, false, 0, 1);
        int b = store.create(2, true, 1, 2);
        assertThat(store.owners().count(a)).isZero();
        assertThat(store.owners().single(a)).isEqualTo(OwnerSets.NONE);
        store.owners().add(a, 5);
        assertThat(store.owners().single(a)).isEqualTo(5);
        assertThat(ownerList(store, a)).isNull();
        store.owners().add(a, 6);
        store.owners().add(b, 7);
        store.owners().add(b, 8);
        assertThat(store.owners().single(a)).isEqualTo(OwnerSets.NONE);
        assertThat(ownerList(store, a)).startsWith(2, 5, 6);
        assertThat(ownerList(store, b)).startsWith(2, 7, 8);
        assertThat(store.owners().remove(a, 5)).isTrue();
        assertThat(store.owners().single(a)).isEqualTo(6);
        assertThat(ownerList(store, a)).isNull();
        assertThat(ownerList(store, b)).as("b's list untouched by a's").startsWith(2, 7, 8);
        store.owners().add(a, 9); // reuses the freed list
        assertThat(ownerList(store, a)).startsWith(2, 6, 9);
        assertThat(store.owners().remove(a, 6)).isTrue();
        assertThat(store.owners().remove(a, 9)).isTrue();
        assertThat(store.owners().remove(a, 9)).isFalse();
        assertThat(store.owners().count(a)).isZero();
        assertThat(store.owners().count(b)).isEqualTo(2);
    }

    @Test
    void ownerSetsKeepListOrderInThePackedWordAndInLists() {
        Random random = new Random(11);
        NodeStore store = new NodeStore();
        OwnerSets owners = store.owners();
        int node = store.create(1, false, 0, 1);
        // 1022 is the largest code a packed word holds; 1023 and up go to a list
        int[] pool = {0, 5, 6, 13, 1021, 1022, 1023, 1200, MembershipCode.of(300, 2)};
        List<Integer> reference = new ArrayList<>();
        int[] codes = new int[16];
        for (int step = 0; step < 20_000; step++) {
            int code = pool[random.nextInt(pool.length)];
            int at = reference.indexOf(code);
            if (random.nextBoolean()) {
                assertThat(owners.add(node, code)).isEqualTo(at < 0);
                if (at < 0) {
                    reference.add(code);
                }
            } else {
                assertThat(owners.remove(node, code)).isEqualTo(at >= 0);
                if (at >= 0) {
                    int last = reference.removeLast(); // a list's rule: the last code takes the removed one's place
                    if (at < reference.size()) {
                        reference.set(at, last);
                    }
                }
            }
            int n = owners.codes(node, codes);
            assertThat(java.util.Arrays.copyOf(codes, n))
                    .as("step %d", step)
                    .containsExactly(
                            reference.stream().mapToInt(Integer::intValue).toArray());
            assertThat(owners.count(node)).isEqualTo(reference.size());
            assertThat(owners.single(node)).isEqualTo(reference.size() == 1 ? reference.get(0) : OwnerSets.NONE);
            int tier = step & 3;
            long[] in = {-1L, -1L, -1L, -1L, -1L};
            long[] out = new long[in.length];
            owners.intersect(node, tier, in, 0, in.length, out);
            long[] expected = new long[in.length];
            for (int c : reference) {
                if (MembershipCode.tier(c) == tier) {
                    expected[MembershipCode.slot(c) >>> 6] |= 1L << MembershipCode.slot(c);
                }
            }
            assertThat(out).isEqualTo(expected);
        }
    }
}
