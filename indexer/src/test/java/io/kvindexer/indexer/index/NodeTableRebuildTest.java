package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Tables past {@link NodeTable}'s bucketed rebuild size (over 2^16 slots): every live node is found by block hash, and
 * by content prefix either in line or in the probe table (never both), after each rebuild, frees (backward shifts)
 * included, and nothing freed is found.
 */
class NodeTableRebuildTest {

    @Test
    void bigTablesFindEveryLiveNodeByBothKeys() {
        NodeStore store = build(40, 15_000);
        assertThat(store.liveCount()).isGreaterThan(200_000); // the tables grew well past 2^16 slots
    }

    /**
     * Long chains and few frees: the prefix table holds a few per cent of the nodes, as on the conversation trace, so
     * it grows by re-placing its own entries (a sparse rebuild) rather than by a scan of every node id.
     */
    @Test
    void aSparseProbeTableGrowsWithEveryNodeOutOfLineOnce() {
        NodeStore store = build(400, 300);
        assertThat(store.liveCount()).isGreaterThan(300_000);
        assertThat(store.probeTable().capacity()).isGreaterThan(4_096); // it grew several times
    }

    /**
     * A sibling of a node in line (same parent, same local hash, another block hash) takes that node out of line; when
     * that node's insert is the one that grows the probe table, the sibling, resolved but not yet inserted, must not
     * be placed by the rebuild and then inserted again.
     */
    @Test
    void aSiblingWhoseArrivalGrowsTheProbeTableIsInItOnce() {
        NodeStore store = new NodeStore();
        int parent = store.create(1, false, 0, 11, NodeStore.NONE);
        store.owners().add(parent, 1);
        int inLine = store.create(2, true, 1, 22, parent);
        store.owners().add(inLine, 1);
        assertThat(store.soleNextChild(parent, 22)).isEqualTo(inLine);
        // roots until the probe table is one insert short of growing (it doubles past a quarter full)
        int capacity = store.probeTable().capacity();
        long hash = 100;
        while (entries(store.probeTable()) + 1 <= capacity / 4) {
            store.owners().add(store.create(hash++, false, 0, hash * 7, NodeStore.NONE), 1);
        }
        int sibling = store.create(3, true, 1, 22, parent);
        store.owners().add(sibling, 1);
        assertThat(store.probeTable().capacity()).isGreaterThan(capacity);
        assertThat(store.soleNextChild(parent, 22)).isEqualTo(NodeStore.NONE);
        // every node is out of line now, each in the table once
        assertThat(entries(store.probeTable())).isEqualTo(store.liveCount());
    }

    private static int entries(NodeTable table) {
        int entries = 0;
        for (int i = 0; i < table.capacity(); i++) {
            entries += table.at(i) != 0 ? 1 : 0;
        }
        return entries;
    }

    private static NodeStore build(int longestChain, int freesPerRound) {
        Random random = new Random(19);
        NodeStore store = new NodeStore();
        List<long[]> live = new ArrayList<>(); // {block hash, node}
        List<Long> freed = new ArrayList<>();
        long next = 1;
        for (int round = 0; round < 6; round++) {
            // chains of 1–longestChain blocks, as stores make them (consecutive ids, each the parent of the next)
            for (int made = 0; made < 60_000; ) {
                int length = 1 + random.nextInt(longestChain);
                long parent = 0;
                int parentNode = NodeStore.NONE;
                for (int i = 0; i < length; i++, made++) {
                    long hash = next++ * 0x9E3779B97F4A7C15L;
                    int node = store.create(hash, i > 0, parent, random.nextLong(), parentNode);
                    store.owners().add(node, random.nextInt(1 << 20));
                    live.add(new long[] {hash, node});
                    parent = hash;
                    parentNode = node;
                }
            }
            for (int k = 0; k < freesPerRound; k++) {
                long[] gone = live.remove(random.nextInt(live.size()));
                int node = (int) gone[1];
                store.owners().remove(node, store.owners().single(node));
                store.free(node);
                freed.add(gone[0]);
            }
            check(store, live, freed);
        }
        return store;
    }

    private static void check(NodeStore store, List<long[]> live, List<Long> freed) {
        assertThat(store.liveCount()).isEqualTo(live.size());
        NodeTable probeTable = store.probeTable();
        for (long[] entry : live) {
            int node = (int) entry[1];
            assertThat(store.findByBlockHash(entry[0])).isEqualTo(node);
            assertThat(store.isResolved(node)).isTrue();
            // a walk reaches a node either from the node before it (in line) or by a probe of the live table
            boolean inLine = node > 0 && store.soleNextChild(node - 1, store.localHash(node)) == node;
            long hash = ContentPrefix.tableHash(store.prefix(node));
            boolean probed = false;
            for (int i = probeTable.home(hash); probeTable.at(i) != 0 && !probed; i = probeTable.next(i)) {
                probed = NodeTable.node(probeTable.at(i)) == node && NodeTable.mayHold(probeTable.at(i), hash);
            }
            assertThat(inLine || probed)
                    .as("node %d in line or by its prefix", node)
                    .isTrue();
            assertThat(inLine && probed)
                    .as("node %d both in line and in the probe table", node)
                    .isFalse();
        }
        for (long hash : freed) {
            assertThat(store.findByBlockHash(hash)).isEqualTo(NodeStore.NONE);
        }
        // each node out of line is in the probe table once: a rebuild re-placed no entry twice and lost none
        int entries = entries(probeTable);
        long outOfLine = live.stream()
                .filter(e -> (int) e[1] == 0
                        || store.soleNextChild((int) e[1] - 1, store.localHash((int) e[1])) != (int) e[1])
                .count();
        assertThat(entries).isEqualTo(outOfLine);
    }
}
