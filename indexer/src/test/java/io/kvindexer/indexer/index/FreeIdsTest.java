package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class FreeIdsTest {

    @Test
    void aRunLongEnoughIsFoundPastShorterOnes() {
        FreeIds free = new FreeIds();
        for (int id : new int[] {3, 4, 10, 11, 12, 13, 14, 20}) {
            free.add(id);
        }
        assertThat(free.findRun(4, 100, false)).isEqualTo(10);
        assertThat(free.findRun(6, 100, false)).as("none that long").isEqualTo(-1);
        assertThat(free.findRun(6, 100, true)).as("the longest seen").isEqualTo(10);
        assertThat(free.count()).as("a search takes nothing").isEqualTo(8);
    }

    @Test
    void aRunThatReachesTheHighWaterMarkIsLongEnough() {
        FreeIds free = new FreeIds();
        free.add(5);
        free.add(98);
        free.add(99);
        assertThat(free.findRun(40, 100, false))
                .as("the fresh ids go on after 99")
                .isEqualTo(98);
    }

    /** Free ids that are all single cost a search little: it stops after a few dozen and the next goes on from there. */
    @Test
    void aSearchThroughSingleFreeIdsIsBoundedAndResumes() {
        FreeIds free = new FreeIds();
        for (int id = 0; id < 2_000; id += 2) {
            free.add(id);
        }
        for (int id = 3_000; id < 3_008; id++) {
            free.add(id);
        }
        int searches = 0;
        int found = -1;
        while (found < 0 && searches < 100) {
            found = free.findRun(8, 10_000, false);
            searches++;
        }
        assertThat(found).isEqualTo(3_000);
        assertThat(searches).as("1,000 single ids, a few dozen a search").isBetween(2, 40);
    }

    @Test
    void aTakenIdIsNoLongerFree() {
        FreeIds free = new FreeIds();
        free.add(7);
        free.add(9);
        assertThat(free.take(9)).isTrue();
        assertThat(free.take(9)).as("taken already").isFalse();
        assertThat(free.take(8)).as("never freed").isFalse();
        assertThat(free.count()).isEqualTo(1);
    }

    /** With {@code orLongest}, a search finds a free id wherever it is, however far from where the last one stopped. */
    @Test
    void theLongestRunSearchFindsAFreeIdWhereverItIs() {
        FreeIds free = new FreeIds();
        int highWater = 1 << 20;
        free.add(3);
        free.add(900_000);
        assertThat(free.findRun(2, highWater, true)).isEqualTo(3);
        assertThat(free.take(3)).isTrue();
        assertThat(free.findRun(2, highWater, false)).as("no run of two").isEqualTo(-1);
        assertThat(free.findRun(2, highWater, true)).as("a single id far on").isEqualTo(900_000);
        assertThat(free.take(900_000)).isTrue();
        free.add(5);
        assertThat(free.findRun(2, highWater, true))
                .as("behind where the search stopped: it wraps")
                .isEqualTo(5);
    }

    /** Frees and takes at random: every id handed out was free, and each free id is handed out once. */
    @Test
    void agreesWithASetOverManyFreesAndTakes() {
        FreeIds free = new FreeIds();
        Set<Integer> expected = new HashSet<>();
        SplittableRandom random = new SplittableRandom(11);
        int highWater = 4_000;
        for (int step = 0; step < 200_000; step++) {
            int id = random.nextInt(highWater);
            switch (random.nextInt(4)) {
                case 0, 1 -> {
                    if (expected.add(id)) {
                        free.add(id);
                    }
                }
                case 2 -> assertThat(free.take(id)).isEqualTo(expected.remove(id));
                default -> {
                    if (!expected.isEmpty()) {
                        int start = free.findRun(1 + random.nextInt(8), highWater, true);
                        assertThat(start).as("some id is free").isNotNegative();
                        assertThat(free.take(start)).isTrue();
                        assertThat(expected.remove(start))
                                .as("id %d was free", start)
                                .isTrue();
                    }
                }
            }
            assertThat(free.count()).isEqualTo(expected.size());
        }
    }
}
