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
        int[][] nodes = new int[engines][length];
        long[] query = new long[length];
        for (int i = 0; i < length; i++) {
            query[i] = 1 + i % 7;
            // one block of each engine in turn: no block's parent is the node before it, so none is in line and
            // every one is in the prefix table
            for (int e = 0; e < engines; e++) {
                long block = (e + 1) * 1_000_000L + i;
                nodes[e][i] = store.create(block, i > 0, i > 0 ? block - 1 : 0L, query[i]);
            }
        }
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
}
