package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A probe's batches when positions have several candidates: engines whose hash seeds differ hold the same content
 * under their own block hashes, so every position of the query has one node per engine in the prefix table.
 */
class PrefixProbeTest {

    @Test
    void batchesThatFindMoreNodesThanPositionsKeepEveryNode() {
        int engines = 3;
        int length = 100;
        NodeStore store = new NodeStore();
        long[] query = query(length);
        int[][] nodes = interleavedChains(store, engines, query);
        PrefixProbe probe = new PrefixProbe();
        probe.reset(store, query);
        probe.tier(0);
        // a walk down engine 0's chain: each position right after the window, so the batches double (1, 2, 4 … 64)
        // and find three nodes per position
        for (int pos = 0; pos < length; pos++) {
            probe.cover(pos == 0 ? NodeStore.NONE : nodes[0][pos - 1], pos);
            List<Integer> found = new ArrayList<>();
            for (int k = probe.first(pos); k < probe.end(pos); k++) {
                found.add(probe.node(k));
            }
            assertThat(found).as("position %d", pos).containsExactly(nodes[0][pos], nodes[1][pos], nodes[2][pos]);
        }
    }

    @Test
    void manyNodesAtAPositionAreFoundByTheirParent() {
        // more nodes per position than the probe looks through one by one: grouped by parent in a table. The
        // batches grow the probe's arrays while earlier positions of the window are grouped already
        int engines = 3 * PrefixProbe.BY_PARENT;
        int length = 60;
        NodeStore store = new NodeStore();
        long[] query = query(length);
        int[][] nodes = interleavedChains(store, engines, query);
        PrefixProbe probe = new PrefixProbe();
        probe.reset(store, query);
        probe.tier(0);
        for (int pos = 0; pos < length; pos++) {
            probe.cover(pos == 0 ? NodeStore.NONE : nodes[0][pos - 1], pos);
        }
        // then every engine's chain, as its frame walks it: at each position, its own node and no other
        for (int e = 0; e < engines; e++) {
            for (int pos = 1; pos < length; pos++) {
                probe.cover(nodes[e][pos - 1], pos);
                long parent = store.blockHash(nodes[e][pos - 1]);
                List<Integer> found = new ArrayList<>();
                for (int k = probe.firstUnder(pos, parent); k >= 0; k = probe.nextUnder(pos, k)) {
                    if (store.parentBlockHash(probe.node(k)) == parent) {
                        found.add(probe.node(k));
                    }
                }
                assertThat(found).as("engine %d, position %d", e, pos).containsExactly(nodes[e][pos]);
            }
        }
    }

    @Test
    void nodesThatShareAParentAreFoundTogetherInNodeIdOrder() {
        // four parents at position 0, ten children each at position 1 with the query's content, interleaved in id:
        // more than the probe looks through one by one, and a group per parent
        NodeStore store = new NodeStore();
        long[] query = query(2);
        int parents = 4;
        int[] roots = new int[parents];
        for (int p = 0; p < parents; p++) {
            roots[p] = store.create(100 + p, false, 0L, query[0]);
        }
        List<List<Integer>> children = new ArrayList<>();
        for (int p = 0; p < parents; p++) {
            children.add(new ArrayList<>());
        }
        for (int c = 0; c < 10 * parents; c++) {
            int p = c % parents;
            children.get(p).add(store.create(1_000 + c, true, 100 + p, query[1]));
        }
        PrefixProbe probe = new PrefixProbe();
        probe.reset(store, query);
        probe.tier(0);
        probe.cover(NodeStore.NONE, 0);
        probe.cover(roots[0], 1);
        for (int p = 0; p < parents; p++) {
            List<Integer> found = new ArrayList<>();
            for (int k = probe.firstUnder(1, 100 + p); k >= 0; k = probe.nextUnder(1, k)) {
                found.add(probe.node(k));
            }
            assertThat(found).as("parent %d", p).isEqualTo(children.get(p));
        }
        assertThat(probe.firstUnder(1, 99))
                .as("a parent with no children there")
                .isEqualTo(-1);
    }

    @Test
    void aPositionStaysProbedWhenFramesAskOutOfOrder() {
        // one engine's frame runs ahead in line and asks for position 40, the next engine's frame asks for 5: both
        // positions keep their nodes, and asking for 40 again probes nothing
        int engines = 3;
        NodeStore store = new NodeStore();
        long[] query = query(48);
        int[][] nodes = interleavedChains(store, engines, query);
        PrefixProbe probe = new PrefixProbe();
        probe.reset(store, query);
        probe.tier(0);
        probe.cover(nodes[0][39], 40);
        probe.cover(nodes[1][4], 5);
        int probed = probe.probedCount();
        probe.cover(nodes[2][39], 40);
        assertThat(probe.probedCount()).as("nodes probed again").isEqualTo(probed);
        for (int pos : new int[] {40, 5}) {
            List<Integer> found = new ArrayList<>();
            for (int k = probe.first(pos); k < probe.end(pos); k++) {
                found.add(probe.node(k));
            }
            assertThat(found).as("position %d", pos).containsExactly(nodes[0][pos], nodes[1][pos], nodes[2][pos]);
        }
    }

    private static long[] query(int length) {
        long[] query = new long[length];
        for (int i = 0; i < length; i++) {
            query[i] = 1 + i % 7;
        }
        return query;
    }

    /**
     * Each engine's chain of the query's blocks under its own block hashes, one block of each engine in turn: no
     * block's parent is the node before it, so none is in line and every one is in the prefix table.
     */
    private static int[][] interleavedChains(NodeStore store, int engines, long[] query) {
        int[][] nodes = new int[engines][query.length];
        for (int i = 0; i < query.length; i++) {
            for (int e = 0; e < engines; e++) {
                long block = (e + 1) * 1_000_000L + i;
                nodes[e][i] = store.create(block, i > 0, i > 0 ? block - 1 : 0L, query[i]);
            }
        }
        return nodes;
    }
}
