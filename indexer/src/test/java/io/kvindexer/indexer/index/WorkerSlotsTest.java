package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.WorkerKey;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The worker order an answer reads: kept in step with slots taken and released, as a fresh sort would give it. */
class WorkerSlotsTest {

    @Test
    void orderKeptInStepEqualsAFreshSort() {
        Random random = new Random(11);
        WorkerSlots slots = new WorkerSlots();
        List<WorkerKey> live = new ArrayList<>();
        for (int step = 0; step < 3_000; step++) {
            if (step % 7 == 0) {
                slots.order(); // built now and then, so that most changes meet an order to keep in step
            }
            // instance ids on both sides of the sign bit: the order compares them unsigned
            WorkerKey w = new WorkerKey(random.nextInt(40) - 20L, random.nextInt(3) - 1);
            if (live.contains(w) && random.nextBoolean()) {
                slots.release(slots.slotOf(w));
                live.remove(w);
            } else if (!live.contains(w)) {
                slots.intern(w);
                live.add(w);
            }
            live.sort(WorkerKey.ORDER);
            WorkerSlots.Order order = slots.order();
            assertThat(order.workers()).containsExactlyElementsOf(live);
            for (int k = 0; k < live.size(); k++) {
                assertThat(slots.worker(order.slots()[k])).isEqualTo(live.get(k));
            }
        }
    }
}
