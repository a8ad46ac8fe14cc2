package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class IndexWritersTest {

    @Test
    void tasksOfOneKeyRunInOrderOnOneThreadAndBarrierWaitsForAll() {
        try (IndexWriters writers = new IndexWriters(3)) {
            Map<Long, List<Integer>> seen = new ConcurrentHashMap<>();
            Map<Long, String> threadOf = new ConcurrentHashMap<>();
            List<String> wrongThread = Collections.synchronizedList(new ArrayList<>());
            for (int i = 0; i < 5_000; i++) {
                long key = i % 17;
                int n = i;
                writers.execute(key, () -> {
                    seen.computeIfAbsent(key, k -> Collections.synchronizedList(new ArrayList<>()))
                            .add(n);
                    String name = Thread.currentThread().getName();
                    if (!name.equals(threadOf.computeIfAbsent(key, k -> name))) {
                        wrongThread.add(key + " on " + name);
                    }
                });
            }
            writers.barrier().orTimeout(60, TimeUnit.SECONDS).join();

            assertThat(wrongThread).isEmpty();
            assertThat(seen).hasSize(17);
            seen.forEach((key, list) -> assertThat(list).isSorted().hasSize(5_000 / 17 + (key < 5_000 % 17 ? 1 : 0)));
            assertThat(threadOf.values()).allMatch(n -> n.startsWith("index-writer-"));
            assertThat(new java.util.HashSet<>(threadOf.values()))
                    .as("keys spread over threads")
                    .hasSizeGreaterThan(1);
        }
    }

    @Test
    void aFailingTaskDoesNotStopLaterTasks() {
        try (IndexWriters writers = new IndexWriters(1)) {
            AtomicInteger ran = new AtomicInteger();
            writers.execute(1, () -> {
                throw new IllegalStateException("boom");
            });
            writers.execute(1, ran::incrementAndGet);
            writers.barrier().orTimeout(60, TimeUnit.SECONDS).join();
            assertThat(ran).hasValue(1);
            assertThat(writers.failures()).as("the failure is counted").isEqualTo(1);
        }
    }

    @Test
    void stickyThreadIsStableAndInRange() {
        try (IndexWriters writers = new IndexWriters(4)) {
            for (long key : new long[] {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 123456789L}) {
                assertThat(writers.threadOf(key)).isBetween(0, 3).isEqualTo(writers.threadOf(key));
            }
        }
    }

    @Test
    void closedWritersDropTasksAndBarrierStillCompletes() {
        IndexWriters writers = new IndexWriters(2);
        writers.close();
        AtomicInteger ran = new AtomicInteger();
        writers.execute(1, ran::incrementAndGet);
        assertThat(writers.barrier()).succeedsWithin(java.time.Duration.ofSeconds(10));
        assertThat(ran).hasValue(0);
    }

    @Test
    void rejectsZeroThreads() {
        assertThatThrownBy(() -> new IndexWriters(0)).isInstanceOf(IllegalArgumentException.class);
    }
}
