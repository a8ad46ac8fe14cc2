package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The matcher's step without a probe ({@link NodeStore#soleNextChild}): it may only skip the content-prefix probe
 * when the next node id is provably the only node the probe could find, and the matcher must answer as the owner-scan
 * oracle does while node ids are freed and handed out again (which the differential test does not do).
 */
class SoleNextChildTest {

    private static final int DEVICE = 0;

    @Test
    void theNextBlockOfAChainIsFoundWithoutAProbeAndNothingElseIs() {
        NodeStore store = new NodeStore();
        int[] chain = chain(store, 100, new long[] {11, 12, 13, 14}, 3);
        for (int i = 0; i + 1 < chain.length; i++) {
            assertThat(store.soleNextChild(chain[i], 11 + i + 1)).isEqualTo(chain[i + 1]);
            assertThat(store.soleNextChild(chain[i], 99))
                    .as("another local hash")
                    .isEqualTo(NodeStore.NONE);
        }
        assertThat(store.soleNextChild(chain[chain.length - 1], 15))
                .as("past the last node")
                .isEqualTo(NodeStore.NONE);

        // a root block created next: the following id, but not a child of the chain's end
        int root = store.create(500, false, 0, 15);
        store.owners().add(root, MembershipCode.of(3, DEVICE));
        assertThat(root).isEqualTo(chain[chain.length - 1] + 1);
        assertThat(store.soleNextChild(chain[chain.length - 1], 15)).isEqualTo(NodeStore.NONE);
    }

    @Test
    void aSecondNodeWithTheSamePrefixTurnsTheShortcutOffAndBothAreMatched() {
        NodeStore store = new NodeStore();
        int[] chain = chain(store, 100, new long[] {1, 2, 3}, 0);
        // another engine's block under the same parent with the same content (a different block hash): same prefix
        int twin = store.create(999, true, store.blockHash(chain[1]), 3);
        store.owners().add(twin, MembershipCode.of(1, DEVICE));
        assertThat(store.soleNextChild(chain[1], 3)).isEqualTo(NodeStore.NONE);

        SlotRuns runs = PrefixMatcher.match(store, new long[] {1, 2, 3}, 2, new boolean[] {true, false, false, false});
        assertThat(runs.device()).containsExactly(3, 0);
        store.owners().add(chain[0], MembershipCode.of(1, DEVICE));
        store.owners().add(chain[1], MembershipCode.of(1, DEVICE));
        runs = PrefixMatcher.match(store, new long[] {1, 2, 3}, 2, new boolean[] {true, false, false, false});
        assertThat(runs.device())
                .as("worker 1 reaches its own third block, the twin")
                .containsExactly(3, 3);

        // the twin goes: the shortcut stays off (the bit says "may be shared"), and the answer is still exact
        store.owners().remove(twin, MembershipCode.of(1, DEVICE));
        store.free(twin);
        runs = PrefixMatcher.match(store, new long[] {1, 2, 3}, 2, new boolean[] {true, false, false, false});
        assertThat(runs.device()).containsExactly(3, 2);
    }

    @Test
    void aBlockTakingTheIdAfterItsParentIsNotInLineWhenASiblingCameFirst() {
        NodeStore store = new NodeStore();
        int parent = store.create(100, false, 0, 1);
        store.owners().add(parent, MembershipCode.of(0, DEVICE));
        int other = store.create(200, false, 0, 7); // takes the id after the parent, then frees it
        store.owners().add(other, MembershipCode.of(0, DEVICE));
        // a sibling (same parent, same local hash, another block hash: another LoRA, say) at a later id
        int sibling = store.create(300, true, 100, 2);
        store.owners().add(sibling, MembershipCode.of(1, DEVICE));
        store.owners().remove(other, MembershipCode.of(0, DEVICE));
        store.free(other);
        int child = store.create(400, true, 100, 2);
        store.owners().add(child, MembershipCode.of(0, DEVICE));
        assertThat(child).isEqualTo(parent + 1);
        assertThat(store.soleNextChild(parent, 2))
                .as("two children with local hash 2")
                .isEqualTo(NodeStore.NONE);
        store.owners().add(parent, MembershipCode.of(1, DEVICE));
        SlotRuns runs = PrefixMatcher.match(store, new long[] {1, 2}, 2, new boolean[] {true, false, false, false});
        assertThat(runs.device()).as("each worker reaches its own child").containsExactly(2, 2);
    }

    /**
     * A child of the highest node that takes a freed, lower id: the id after its parent is past every node handed out,
     * and when the pages are full there is no page for it (its in-line bit was read there and threw, losing the rest
     * of the writer's batch).
     */
    @Test
    void aChildOfTheLastNodeOnFullPagesTakesAFreedId() {
        NodeStore store = new NodeStore();
        int last = NodeStore.NONE;
        for (int i = 0; i < 16 * NodeStore.PAGE; i++) { // the first pages exactly: the next id needs a new page array
            last = store.create(1_000 + i, false, 0, i);
            store.owners().add(last, MembershipCode.of(0, DEVICE));
        }
        // so many freed that no fresh id is made while they wait (an eighth of the live nodes, and 64)
        for (int node = 0; node < 5_000; node++) {
            store.owners().remove(node, MembershipCode.of(0, DEVICE));
            store.free(node);
        }
        int child = store.create(7, true, store.blockHash(last), 5);
        store.owners().add(child, MembershipCode.of(0, DEVICE));
        assertThat(child).isZero();
        SlotRuns runs = PrefixMatcher.match(
                store, new long[] {store.localHash(last), 5}, 1, new boolean[] {true, false, false, false});
        assertThat(runs.device()).as("the parent and its child").containsExactly(2);
    }

    /**
     * Evictions free ids all over. A chain stored afterwards starts where a run of free ids is long enough for it
     * and goes on in the ids after, so it is in line again (handed out last-freed-first, these ids would have been
     * 180, 160, 140, 120, 100, 59, 58, 57: a probe at every step).
     */
    @Test
    void aChainStoredAfterEvictionsIsLaidOutInLine() {
        NodeStore store = new NodeStore();
        for (int i = 0; i < 200; i++) {
            int node = store.create(1_000 + i, false, 0, i);
            store.owners().add(node, MembershipCode.of(0, DEVICE));
        }
        int[] freed = {50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 100, 120, 140, 160, 180};
        for (int node : freed) {
            store.owners().remove(node, MembershipCode.of(0, DEVICE));
            store.free(node);
        }
        int[] chain = new int[8];
        for (int i = 0; i < chain.length; i++) {
            int parent = i == 0 ? NodeStore.NONE : chain[i - 1];
            chain[i] = store.create(5_000 + i, i > 0, i > 0 ? 5_000 + i - 1 : 0, 900 + i, parent, chain.length - i);
            store.owners().add(chain[i], MembershipCode.of(1, DEVICE));
        }
        assertThat(chain).containsExactly(50, 51, 52, 53, 54, 55, 56, 57);
        for (int i = 0; i + 1 < chain.length; i++) {
            assertThat(store.soleNextChild(chain[i], 900 + i + 1)).isEqualTo(chain[i + 1]);
        }
        long[] query = {900, 901, 902, 903, 904, 905, 906, 907};
        SlotRuns runs = PrefixMatcher.match(store, query, 2, new boolean[] {true, false, false, false});
        assertThat(runs.device()).containsExactly(0, 8);
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4})
    void agreesWithTheOwnerScanWhileIdsAreReused(long seed) {
        Trial t = new Trial(seed, 6, new boolean[] {true, false, false, false});
        for (int round = 0; round < 300; round++) {
            // a worker stores a chain: a prefix of an earlier chain's content (same blocks when it is the same
            // engine's hash chain, twins under another "hash seed") and then new content
            long[] content = new long[1 + t.random.nextInt(12)];
            int[] reuse = t.chains.isEmpty() || t.random.nextInt(3) == 0
                    ? null
                    : t.chains.get(t.random.nextInt(t.chains.size()));
            long[] reusedContent = reuse == null ? null : t.contents.get(t.chains.indexOf(reuse));
            int shared = reuse == null ? 0 : t.random.nextInt(Math.min(reuse.length, content.length) + 1);
            for (int i = 0; i < content.length; i++) {
                content[i] = i < shared ? reusedContent[i] : t.random.nextInt(4);
            }
            boolean sameEngine = t.random.nextBoolean();
            int code = MembershipCode.of(t.random.nextInt(t.workers), DEVICE);
            int[] nodes = new int[content.length];
            int previous = NodeStore.NONE;
            for (int i = 0; i < content.length; i++) {
                int node = i < shared && sameEngine && t.store.isLive(reuse[i]) ? reuse[i] : NodeStore.NONE;
                if (node == NodeStore.NONE) {
                    long parentHash = previous == NodeStore.NONE ? 0 : t.store.blockHash(previous);
                    node = t.store.create(
                            t.nextHash++ * 0x9E3779B97F4A7C15L, previous != NodeStore.NONE, parentHash, content[i]);
                }
                t.store.owners().add(node, code);
                nodes[i] = node;
                previous = node;
            }
            t.chains.add(nodes);
            t.contents.add(content);
            // evictions: blocks anywhere in a chain (middle blocks too), freeing nodes whose ids the next stores take
            for (int e = t.random.nextInt(4); e > 0; e--) {
                t.evictOne(false);
            }
            for (int q = 0; q < 3; q++) {
                t.assertAQueryAgrees(4, round);
            }
        }
    }

    /**
     * Runs of blocks in line with the same holders ({@link NodeStore#inLineRun}) are taken without a probe or an
     * intersection, so the bits that mark them must follow every change of owners: several workers (more than a list
     * holds, so sets turn dense and back) store the same chains on two tiers, and owners leave from anywhere in a
     * chain, freeing ids that later chains take again.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1, 2, 3, 4, 5, 6})
    void runsOfTheSameHoldersAgreeWithTheOwnerScan(long seed) {
        Trial t = new Trial(seed, 80, new boolean[] {true, true, false, false});
        int host = 1;
        for (int round = 0; round < 200; round++) {
            if (t.chains.isEmpty() || t.random.nextInt(4) == 0) {
                long[] content = new long[1 + t.random.nextInt(20)];
                int[] base = t.chains.isEmpty() ? null : t.chains.get(t.random.nextInt(t.chains.size()));
                int shared = base == null ? 0 : t.random.nextInt(Math.min(base.length, content.length) + 1);
                int[] nodes = new int[content.length];
                for (int i = 0; i < content.length; i++) {
                    if (i < shared && t.store.isLive(base[i])) {
                        content[i] = t.store.localHash(base[i]);
                        nodes[i] = base[i];
                    } else {
                        content[i] = t.random.nextInt(3);
                        long parentHash = i == 0 ? 0 : t.store.blockHash(nodes[i - 1]);
                        nodes[i] = t.store.create(t.nextHash++ * 0x9E3779B97F4A7C15L, i > 0, parentHash, content[i]);
                        t.store.owners().add(nodes[i], MembershipCode.of(t.random.nextInt(t.workers), DEVICE));
                    }
                }
                t.chains.add(nodes);
                t.contents.add(content);
            }
            // workers take a chain's first blocks, the most of them on the device, some on the host tier
            int[] chain = t.chains.get(t.random.nextInt(t.chains.size()));
            for (int k = 1 + t.random.nextInt(t.workers); k > 0; k--) {
                int code = MembershipCode.of(t.random.nextInt(t.workers), t.random.nextInt(5) == 0 ? host : DEVICE);
                int n = t.random.nextBoolean() ? chain.length : 1 + t.random.nextInt(chain.length); // whole: runs
                for (int i = 0; i < n && t.store.isLive(chain[i]); i++) {
                    t.store.owners().add(chain[i], code);
                }
            }
            // owners leave anywhere in a chain; a node without owners is freed
            for (int e = t.random.nextInt(12); e > 0; e--) {
                t.evictOne(true);
            }
            for (int q = 0; q < 4; q++) {
                t.assertAQueryAgrees(3, round);
            }
        }
    }

    /** A seeded store of chains that a test grows, evicts from and queries with both matchers. */
    private static final class Trial {
        final SplittableRandom random;
        final int workers;
        final boolean[] tiers;
        final NodeStore store = new NodeStore();
        final List<int[]> chains = new ArrayList<>();
        final List<long[]> contents = new ArrayList<>();
        long nextHash = 1;

        Trial(long seed, int workers, boolean[] tiers) {
            this.random = new SplittableRandom(seed);
            this.workers = workers;
            this.tiers = tiers;
        }

        /** Removes an owner (the last code, or any) of a random chain's random block; frees it when none is left. */
        void evictOne(boolean anyCode) {
            int[] victim = chains.get(random.nextInt(chains.size()));
            int node = victim[random.nextInt(victim.length)];
            if (store.isLive(node)) {
                int[] codes = new int[store.owners().count(node)];
                int n = store.owners().codes(node, codes);
                store.owners().remove(node, codes[anyCode ? random.nextInt(n) : n - 1]);
                if (store.owners().count(node) == 0) {
                    store.free(node);
                }
            }
        }

        /**
         * Matches a random chain's content (now and then with one block changed to a local hash below {@code locals})
         * with both matchers and compares their runs.
         */
        void assertAQueryAgrees(int locals, int round) {
            long[] query = contents.get(random.nextInt(contents.size())).clone();
            if (random.nextInt(4) == 0) {
                query[random.nextInt(query.length)] = random.nextInt(locals);
            }
            SlotRuns expected = OwnerScanMatcher.match(store, query, workers, tiers);
            SlotRuns actual = PrefixMatcher.match(store, query, workers, tiers);
            if (expected == null) {
                assertThat(actual).isNull();
            } else {
                assertThat(actual.device()).as("round %d, device", round).containsExactly(expected.device());
                assertThat(actual.host()).as("round %d, host", round).containsExactly(expected.host());
            }
        }
    }

    /** Creates a chain of root + children with the given local hashes, all held by {@code slot} on the device. */
    private static int[] chain(NodeStore store, long firstHash, long[] locals, int slot) {
        int[] nodes = new int[locals.length];
        for (int i = 0; i < locals.length; i++) {
            nodes[i] = store.create(firstHash + i, i > 0, i > 0 ? firstHash + i - 1 : 0, locals[i]);
            store.owners().add(nodes[i], MembershipCode.of(slot, DEVICE));
        }
        return nodes;
    }
}
