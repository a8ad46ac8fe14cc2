package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import it.unimi.dsi.fastutil.ints.IntArrayList;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The bitset matcher ({@link PrefixMatcher}) against the owner-scan matcher it replaced ({@link OwnerScanMatcher}),
 * on random block trees with up to 2,048 workers: random fan-out and depth, same-content siblings (several nodes
 * under one (parent, local) key), owner sets from one worker to all of them (so small lists and dense bitsets both
 * occur, and turn into each other as owners leave), all four tiers, and queries that follow the tree, leave it, or
 * are random. Every worker's device, host and disk run must be identical.
 */
class PrefixMatcherDifferentialTest {

    private static final int TIERS = MembershipCode.TIERS;

    @ParameterizedTest(name = "seed {0}, {1} workers, {2} blocks")
    @CsvSource({
        "1, 1, 300",
        "2, 7, 800",
        "3, 64, 2000",
        "4, 300, 2000",
        "5, 1000, 1500",
        "6, 2048, 1500",
        "7, 2048, 400",
        "8, 130, 3000"
    })
    void bitsetMatcherAgreesWithTheOwnerScan(long seed, int workers, int blocks) {
        SplittableRandom random = new SplittableRandom(seed);
        NodeStore store = new NodeStore();
        List<Integer> nodes = new ArrayList<>();
        grow(store, nodes, random, workers, blocks);
        compare(store, nodes, random, workers, 200);

        // owners leave (dense sets shrink back into lists, lists into single owners, nodes are freed), then compare
        // again
        int[] codes = new int[workers * TIERS];
        for (int node : nodes) {
            if (!store.isLive(node)) {
                continue;
            }
            int n = store.owners().codes(node, codes);
            for (int i = 0; i < n; i++) {
                if (random.nextInt(3) == 0) {
                    assertThat(store.owners().remove(node, codes[i])).isTrue();
                }
            }
            if (store.owners().count(node) == 0) {
                store.free(node);
            }
        }
        nodes.removeIf(node -> !store.isLive(node));
        compare(store, nodes, random, workers, 200);
    }

    /** Builds a random forest: each block hangs under a random earlier block (biased to recent ones) or the root. */
    private static void grow(NodeStore store, List<Integer> nodes, SplittableRandom random, int workers, int blocks) {
        long nextBlockHash = 1;
        for (int b = 0; b < blocks; b++) {
            boolean hasParent = !nodes.isEmpty() && random.nextInt(20) != 0;
            int parent = hasParent
                    ? nodes.get(Math.max(0, nodes.size() - 1 - random.nextInt(random.nextBoolean() ? 4 : nodes.size())))
                    : NodeStore.NONE;
            long parentHash = hasParent ? store.blockHash(parent) : 0L;
            long local = random.nextInt(6);
            // now and then a same-content sibling: a second node under the same (parent, local) key
            int node = store.create(nextBlockHash++ * 0x9E3779B97F4A7C15L, hasParent, parentHash, local);
            nodes.add(node);
            int owners = switch (random.nextInt(6)) {
                case 0 -> workers;
                case 1 -> 1 + random.nextInt(Math.min(workers, 70));
                case 2 -> 1 + random.nextInt(workers);
                default -> 1 + random.nextInt(Math.min(workers, 3));
            };
            for (int o = 0; o < owners; o++) {
                int slot = random.nextInt(workers);
                int tier = random.nextInt(4) == 0 ? random.nextInt(TIERS) : 0;
                store.owners().add(node, MembershipCode.of(slot, tier));
            }
            if (random.nextInt(10) == 0) {
                b++;
                int twin = store.create(nextBlockHash++ * 0x9E3779B97F4A7C15L, hasParent, parentHash, local);
                nodes.add(twin);
                store.owners().add(twin, MembershipCode.of(random.nextInt(workers), 0));
                store.owners().add(twin, MembershipCode.of(random.nextInt(workers), random.nextInt(TIERS)));
            }
        }
    }

    private static void compare(
            NodeStore store, List<Integer> nodes, SplittableRandom random, int workers, int queries) {
        boolean[] allTiers = {true, true, true, true};
        IntArrayList children = new IntArrayList();
        long matchedBlocks = 0;
        for (int q = 0; q < queries; q++) {
            long[] query = query(store, nodes, random, children);
            boolean[] tiers = random.nextInt(4) == 0
                    ? new boolean[] {true, random.nextBoolean(), random.nextBoolean(), random.nextBoolean()}
                    : allTiers;
            SlotRuns expected = OwnerScanMatcher.match(store, query, workers, tiers);
            SlotRuns actual = PrefixMatcher.match(store, query, workers, tiers);
            if (expected == null) {
                assertThat(actual).isNull();
                continue;
            }
            assertThat(actual.device()).as("device runs of query %d", q).containsExactly(expected.device());
            assertThat(actual.host()).as("host runs of query %d", q).containsExactly(expected.host());
            assertThat(actual.disk()).as("disk runs of query %d", q).containsExactly(expected.disk());
            assertThat(actual.all()).as("external runs of query %d", q).containsExactly(expected.all());
            for (int run : expected.all()) {
                matchedBlocks += run;
            }
        }
        assertThat(matchedBlocks)
                .as("the queries must match something, or the comparison proves little")
                .isPositive();
    }

    /** A query that follows the tree from the root for a while, then possibly strays, or is random. */
    private static long[] query(NodeStore store, List<Integer> nodes, SplittableRandom random, IntArrayList children) {
        int length = 1 + random.nextInt(random.nextInt(8) == 0 ? 120 : 40);
        long[] query = new long[length];
        if (random.nextInt(10) == 0 || nodes.isEmpty()) {
            for (int i = 0; i < length; i++) {
                query[i] = random.nextInt(6);
            }
            return query;
        }
        // walk down from a random root-level block by picking, at each step, the local hash of a real child
        int node = NodeStore.NONE;
        for (int i = 0; i < length; i++) {
            long local = random.nextInt(6);
            if (random.nextInt(30) != 0) {
                for (long candidate = 0; candidate < 6; candidate++) {
                    long l = (candidate + random.nextInt(6)) % 6;
                    store.children(
                            node != NodeStore.NONE, node == NodeStore.NONE ? 0 : store.blockHash(node), l, children);
                    if (!children.isEmpty()) {
                        local = l;
                        node = children.getInt(random.nextInt(children.size()));
                        break;
                    }
                }
            }
            query[i] = local;
        }
        return query;
    }
}
