package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.hash.SequenceHasher;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Several submitting threads (one per engine instance, as listeners are) through {@link IndexWriters}, with
 * readers querying all the time. The final state must equal the single-threaded {@link ReferenceIndex} fed the
 * same per-instance streams, and no query may ever see half of an event.
 */
class IndexConcurrencyTest {

    private static final int B = 4;
    private static final StorageTier[] TIERS = StorageTier.values();

    /** A corpus of documents sharing prefixes; content ids from a small vocabulary so contents repeat. */
    private static final class Corpus {
        final int[][] contents;
        final long[][] seq;
        final IndexFixture hasher;

        Corpus(Random random, int docs, int length, IndexFixture hasher) {
            this.hasher = hasher;
            contents = new int[docs][length];
            seq = new long[docs][];
            for (int d = 0; d < docs; d++) {
                int shared = d > 0 && random.nextInt(10) < 6 ? random.nextInt(length) : 0;
                int base = d > 0 ? random.nextInt(d) : 0;
                for (int i = 0; i < length; i++) {
                    contents[d][i] = i < shared ? contents[base][i] : 1 + random.nextInt(5);
                }
                seq[d] = SequenceHasher.sequenceHashes(hasher.local(contents[d]));
            }
        }

        BlockStored stored(int doc, int from, int len, StorageTier tier, Long bogusParent) {
            int to = Math.min(contents[doc].length, from + len);
            Long parent = from == 0 ? null : bogusParent != null ? bogusParent : seq[doc][from - 1];
            return hasher.storedEvent(
                    tier, parent, Arrays.copyOfRange(seq[doc], from, to), Arrays.copyOfRange(contents[doc], from, to));
        }
    }

    /** One step of an instance's stream: a batch for one rank, or a worker / instance removal. */
    private record Step(WorkerKey worker, List<KvEvent> batch, boolean removeWorker, boolean removeInstance) {}

    private static List<Step> instanceStream(Random random, Corpus corpus, long instance, int ranks, int steps) {
        List<Step> out = new ArrayList<>();
        for (int s = 0; s < steps; s++) {
            WorkerKey worker = new WorkerKey(instance, random.nextInt(ranks));
            int roll = random.nextInt(1000);
            if (roll < 3) {
                out.add(new Step(worker, List.of(), false, true));
                continue;
            }
            if (roll < 8) {
                out.add(new Step(worker, List.of(), true, false));
                continue;
            }
            List<KvEvent> batch = new ArrayList<>();
            for (int e = 1 + random.nextInt(3); e > 0; e--) {
                int kind = random.nextInt(100);
                int doc = random.nextInt(corpus.contents.length);
                StorageTier tier = random.nextInt(10) < 7 ? StorageTier.DEVICE : TIERS[1 + random.nextInt(3)];
                if (kind < 60) {
                    int from = random.nextInt(10) < 4 ? 0 : random.nextInt(corpus.contents[doc].length);
                    // an unknown parent only on the device tier (dropped there): a lower tier would accept it and
                    // fix that block's parent first-come, making the result depend on the interleaving of instances
                    Long bogus = tier == StorageTier.DEVICE && random.nextInt(10) == 0 ? random.nextLong() : null;
                    batch.add(corpus.stored(doc, from, 1 + random.nextInt(4), tier, bogus));
                } else if (kind < 97) {
                    long[] hashes = new long[1 + random.nextInt(3)];
                    for (int i = 0; i < hashes.length; i++) {
                        hashes[i] = corpus.seq[doc][random.nextInt(corpus.seq[doc].length)];
                    }
                    batch.add(new BlockRemoved(hashes, tier));
                } else {
                    batch.add(new AllBlocksCleared());
                }
            }
            out.add(new Step(worker, batch, false, false));
        }
        return out;
    }

    /** Waits for the writers, lets the index apply all they submitted, then stops the readers and waits for them. */
    private static void finish(IndexFixture f, List<Thread> writers, AtomicBoolean writing, List<Thread> readers)
            throws InterruptedException {
        for (Thread t : writers) {
            t.join(TimeUnit.MINUTES.toMillis(5));
        }
        f.flush();
        writing.set(false);
        for (Thread t : readers) {
            t.join(TimeUnit.MINUTES.toMillis(1));
        }
    }

    @Test
    void concurrentWritersAndReadersEndInTheReferenceState() throws Exception {
        Random random = new Random(20261201);
        try (IndexFixture f = new IndexFixture(B, 3)) {
            Corpus corpus = new Corpus(random, 40, 12, f);
            int instances = 5;
            List<List<Step>> streams = new ArrayList<>();
            for (int i = 0; i < instances; i++) {
                streams.add(instanceStream(random, corpus, 1000 + i, 2, 3000));
            }

            ReferenceIndex reference = new ReferenceIndex(B);
            for (List<Step> stream : streams) {
                for (Step step : stream) {
                    if (step.removeInstance()) {
                        reference.removeInstance(step.worker().instanceId());
                    } else if (step.removeWorker()) {
                        reference.removeWorker(step.worker());
                    } else {
                        step.batch().forEach(e -> reference.apply(step.worker(), e));
                    }
                }
            }

            AtomicBoolean writing = new AtomicBoolean(true);
            ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
            AtomicLong queries = new AtomicLong();
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                Random readerRandom = new Random(r);
                readers.add(Thread.ofPlatform().start(() -> {
                    while (writing.get()) {
                        long[] q = f.local(corpus.contents[readerRandom.nextInt(corpus.contents.length)]);
                        for (MatchResult.WorkerMatch m : f.index.findMatches(q).workers()) {
                            if (!(m.deviceBlocks() <= m.hostBlocks()
                                    && m.hostBlocks() <= m.diskBlocks()
                                    && m.diskBlocks() <= q.length
                                    && m.diskBlocks() > 0)) {
                                violations.add(m.toString());
                            }
                        }
                        f.index.stats();
                        queries.incrementAndGet();
                    }
                }));
            }
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> submitters = new ArrayList<>();
            for (List<Step> stream : streams) {
                submitters.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    for (Step step : stream) {
                        if (step.removeInstance()) {
                            f.index.removeInstance(step.worker().instanceId());
                        } else if (step.removeWorker()) {
                            f.index.removeWorker(step.worker());
                        } else {
                            f.index.submit(step.worker(), step.batch());
                        }
                    }
                }));
            }
            start.countDown();
            finish(f, submitters, writing, readers);

            assertThat(violations).isEmpty();
            assertThat(queries.get()).isPositive();
            assertThat(reference.memberships)
                    .as("the stream must leave something to compare")
                    .hasSizeGreaterThan(50);
            assertThat(f.index.stats().memberships()).isEqualTo(reference.memberships.size());
            assertThat(f.index.stats().blocks()).isEqualTo(reference.nodes.size());
            Set<DumpRoundTripTest.Entry> dumped = io.kvindexer.indexer.http.DumpEvents.of(f.index).stream()
                    .map(DumpRoundTripTest.Entry::of)
                    .collect(Collectors.toSet());
            assertThat(dumped).isEqualTo(reference.entries());
            int compared = 0;
            for (int d = 0; d < corpus.contents.length; d++) {
                for (int len = 1; len <= corpus.contents[d].length; len += 3) {
                    long[] q = f.local(Arrays.copyOf(corpus.contents[d], len));
                    assertThat(IndexFixture.byWorker(f.index.findMatches(q)))
                            .as("doc %d, %d blocks", d, len)
                            .isEqualTo(reference.match(q));
                    compared++;
                }
            }
            assertThat(compared).isEqualTo(160);
            assertThat(f.applied("stored", ApplyStatus.PARENT_BLOCK_NOT_FOUND)).isPositive();
            assertThat(f.applied("stored", ApplyStatus.DUPLICATE_STORE)).isPositive();
            assertThat(f.applied("removed", ApplyStatus.BLOCK_NOT_FOUND)).isPositive();
        }
    }

    /**
     * Torn-read checker. Documents come in two groups; documents of a group share exactly their first 4 of 8
     * blocks. Each worker holds at most one document at a time: one event stores all 8 blocks from the root, one
     * event removes them tail first. Any consistent state gives a query for a document a device depth of 0, 4 or 8
     * per worker; seeing 1–3 or 5–7 would mean the query saw half of an event. The same on the host tier over a
     * device prefix that never changes: host depth 4 or 8 only.
     */
    @Test
    void queriesNeverSeeHalfAnEvent() throws Exception {
        int[][] docs = {
            {1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 4, 9, 10, 11, 12},
            {21, 22, 23, 24, 25, 26, 27, 28}, {21, 22, 23, 24, 29, 30, 31, 32}
        };
        try (IndexFixture f = new IndexFixture(B, 3)) {
            long[][] seq = new long[docs.length][];
            long[][] local = new long[docs.length][];
            for (int d = 0; d < docs.length; d++) {
                local[d] = f.local(docs[d]);
                seq[d] = SequenceHasher.sequenceHashes(local[d]);
            }
            int deviceWorkers = 6;
            WorkerKey hostWorker = new WorkerKey(99, 0);
            f.store(hostWorker, null, Arrays.copyOf(seq[0], 4), Arrays.copyOf(docs[0], 4));

            AtomicBoolean writing = new AtomicBoolean(true);
            ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
            AtomicLong observedFull = new AtomicLong();
            List<Thread> readers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int offset = r;
                readers.add(Thread.ofPlatform().start(() -> {
                    for (int i = offset; writing.get(); i++) {
                        int d = i % docs.length;
                        for (MatchResult.WorkerMatch m :
                                f.index.findMatches(local[d]).workers()) {
                            boolean legal = m.worker().equals(hostWorker)
                                    ? m.deviceBlocks() == 4 && (m.hostBlocks() == 4 || m.hostBlocks() == 8)
                                    : m.deviceBlocks() == 4 || m.deviceBlocks() == 8;
                            if (!legal) {
                                violations.add("doc " + d + ": " + m);
                            }
                            if (m.diskBlocks() == 8) {
                                observedFull.incrementAndGet();
                            }
                        }
                    }
                }));
            }
            List<Thread> writers = new ArrayList<>();
            for (int wi = 0; wi < deviceWorkers; wi++) {
                WorkerKey worker = new WorkerKey(wi, wi % 2);
                Random random = new Random(wi);
                writers.add(Thread.ofPlatform().start(() -> {
                    for (int round = 0; round < 1500; round++) {
                        int d = random.nextInt(docs.length);
                        f.index.submit(worker, List.of(f.storedEvent(StorageTier.DEVICE, null, seq[d], docs[d])));
                        f.index.submit(worker, List.of(new BlockRemoved(reversed(seq[d]), StorageTier.DEVICE)));
                    }
                }));
            }
            writers.add(Thread.ofPlatform().start(() -> {
                long[] tail = Arrays.copyOfRange(seq[0], 4, 8);
                for (int round = 0; round < 1500; round++) {
                    f.index.submit(
                            hostWorker,
                            List.of(f.storedEvent(
                                    StorageTier.HOST_PINNED, seq[0][3], tail, Arrays.copyOfRange(docs[0], 4, 8))));
                    f.index.submit(hostWorker, List.of(new BlockRemoved(reversed(tail), StorageTier.HOST_PINNED)));
                }
            }));
            finish(f, writers, writing, readers);

            assertThat(violations).isEmpty();
            assertThat(f.index.stats().memberships())
                    .as("only the fixed device prefix is left")
                    .isEqualTo(4);
            assertThat(f.applied("stored", ApplyStatus.OK)).isEqualTo(1 + 7 * 1500);
            assertThat(f.applied("removed", ApplyStatus.OK)).isEqualTo(7 * 1500);
            // not asserted (timing-dependent on a loaded machine), only reported
            System.out.println("torn-read checker: queries that saw a full 8-block match: " + observedFull.get());
        }
    }

    private static long[] reversed(long[] hashes) {
        long[] out = new long[hashes.length];
        for (int i = 0; i < hashes.length; i++) {
            out[i] = hashes[hashes.length - 1 - i];
        }
        return out;
    }
}
