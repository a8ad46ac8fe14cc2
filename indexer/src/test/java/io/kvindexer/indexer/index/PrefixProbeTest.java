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
            for (int k = probe.first(pos); k < probe.first(pos + 1); k++) {
                found.add(probe.node(k));
            }
            assertThat(found).as("position %d", pos).containsExactly(nodes[0][pos], nodes[1][pos], nodes[2][pos]);
        }
    }

    @Test
    void manyNodesAtAPositionAreFoundByTheirParent() {
        // more nodes per position than the probe looks through one by one: sorted by parent, then searched. The
        // batches grow the probe's arrays while earlier positions of the window are sorted already
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
                for (int k = probe.firstUnder(pos, parent), end = probe.endUnder(pos, parent, k); k < end; k++) {
                    if (store.parentBlockHash(probe.node(k)) == parent) {
                        found.add(probe.node(k));
                    }
                }
                assertThat(found).as("engine %d, position %d", e, pos).containsExactly(nodes[e][pos]);
            }
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
