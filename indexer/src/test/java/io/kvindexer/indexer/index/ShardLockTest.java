package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A query waits for one step of a write, wherever it finds the writer: holding the lock or waiting for it. */
class ShardLockTest {

    private static final long BATCH_MILLIS = 1_000;

    @Test
    void aQueryThatArrivesWhileTheWriterWaitsGetsInAtTheWritersFirstPause() throws Exception {
        ShardLock lock = new ShardLock();
        lock.lockQuery(); // a query in progress: the writer below has to wait for it

        AtomicLong writerHas = new AtomicLong();
        CountDownLatch writerDone = new CountDownLatch(1);
        Thread writer = Thread.ofPlatform().start(() -> {
            lock.lockWrite();
            writerHas.set(System.nanoTime());
            try {
                // a long batch: a pause between every step of about a millisecond
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BATCH_MILLIS);
                while (System.nanoTime() < end) {
                    lock.letQueriesIn();
                    sleepQuietly(1);
                }
            } finally {
                lock.unlockWrite();
                writerDone.countDown();
            }
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> writer.getState() == Thread.State.WAITING);

        AtomicLong queryHas = new AtomicLong();
        Thread query = Thread.ofPlatform().start(() -> {
            lock.lockQuery();
            queryHas.set(System.nanoTime());
            lock.unlockQuery();
        });
        // the second query arrives while the writer waits, then the first one ends and the writer gets the lock
        sleepQuietly(50);
        lock.unlockQuery();

        query.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(queryHas.get()).as("the query got in").isPositive();
        long afterWriter = TimeUnit.NANOSECONDS.toMillis(queryHas.get() - writerHas.get());
        assertThat(writerDone.getCount())
                .as("the query got in before the writer's batch ended")
                .isEqualTo(1);
        assertThat(afterWriter).isLessThan(BATCH_MILLIS / 2);
        writer.join(TimeUnit.SECONDS.toMillis(10));
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
