package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * How {@link NodeStore} hands out freed ids under churn: an engine's pool that is always full, chains stored and
 * evicted tail first, as the trace benches' engines do.
 */
class FreedIdLayoutTest {

    private static final int CODE = MembershipCode.of(0, 0);

    /**
     * Fresh ids are made only while few ids are free, so the ids stay within an eighth (and 64) of the live nodes
     * above them; and most chains stored into a full pool are in line again, although every id they get was freed.
     */
    @Test
    void underChurnTheIdsStayBoundedAndChainsStayInLine() {
        NodeStore store = new NodeStore();
        SplittableRandom random = new SplittableRandom(3);
        ArrayDeque<int[]> pool = new ArrayDeque<>(); // oldest chain first
        long nextHash = 1;
        int live = 0;
        int steps = 0;
        int inLine = 0;
        for (int round = 0; round < 20_000; round++) {
            int length = 1 + random.nextInt(40);
            while (live + length > 10_000) { // evict the oldest chain's blocks, tail first
                int[] oldest = pool.pollFirst();
                for (int i = oldest.length - 1; i >= 0; i--) {
                    store.owners().remove(oldest[i], CODE);
                    store.free(oldest[i]);
                    live--;
                }
            }
            int[] chain = new int[length];
            for (int i = 0; i < length; i++) {
                int highWater = store.highWater();
                long hash = nextHash++;
                chain[i] = store.create(
                        hash,
                        i > 0,
                        i > 0 ? hash - 1 : 0,
                        random.nextLong(),
                        i > 0 ? chain[i - 1] : NodeStore.NONE,
                        length - i);
                store.owners().add(chain[i], CODE);
                live++;
                if (store.highWater() > highWater) {
                    assertThat(store.highWater())
                            .as("a fresh id while few are free")
                            .isLessThanOrEqualTo(live + live / 8 + 65);
                }
                if (i > 0) {
                    steps++;
                    inLine += chain[i] == chain[i - 1] + 1 ? 1 : 0;
                }
            }
            pool.addLast(chain);
        }
        assertThat(store.liveCount()).isEqualTo(live);
        assertThat(inLine).as("steps down a chain to the next id, of %d", steps).isGreaterThan(steps * 9 / 10);
    }

    /**
     * Engines store a request's decode blocks one store at a time, between other requests' stores (vLLM: a block as
     * it fills): the ids kept free after each store's last block put most of them right after their parent, and the
     * kept ids stay within their bound.
     */
    @Test
    void decodeBlocksStoredOneAtATimeBetweenOtherRequestsStayInLine() {
        NodeStore store = new NodeStore();
        SplittableRandom random = new SplittableRandom(5);
        int requests = 64;
        int[] last = new int[requests];
        long[] lastHash = new long[requests];
        long nextHash = 1;
        for (int r = 0; r < requests; r++) { // each request's prompt, one store of 16 blocks
            for (int i = 0; i < 16; i++) {
                long hash = nextHash++;
                last[r] = store.create(
                        hash,
                        i > 0,
                        i > 0 ? lastHash[r] : 0,
                        random.nextLong(),
                        i > 0 ? last[r] : NodeStore.NONE,
                        16 - i);
                store.owners().add(last[r], CODE);
                lastHash[r] = hash;
            }
            store.keepNextFree(last[r]);
        }
        int steps = 0;
        int inLine = 0;
        for (int step = 0; step < 40; step++) { // then a decode block of each request in turn
            for (int r = 0; r < requests; r++) {
                long hash = nextHash++;
                int node = store.create(hash, true, lastHash[r], random.nextLong(), last[r], 1);
                store.owners().add(node, CODE);
                store.keepNextFree(node);
                steps++;
                inLine += node == last[r] + 1 ? 1 : 0;
                last[r] = node;
                lastHash[r] = hash;
                assertThat(store.keptCount()).as("ids kept free").isLessThanOrEqualTo(store.liveCount() / 8 + 64);
            }
        }
        assertThat(inLine)
                .as("decode blocks right after their parent, of %d", steps)
                .isGreaterThan(steps * 3 / 4);
    }
}
