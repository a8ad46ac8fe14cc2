package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.KvEvent;
import io.kvindexer.indexer.hash.SequenceHasher;
import io.kvindexer.indexer.recovery.BinaryReplica;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The index against {@link ReferenceIndex} under the churn real engines make: each worker an LRU pool of device blocks
 * that stores a prompt's new blocks under the prefix it still holds (as one chain, or its first blocks and then one
 * per decode step while other engines store theirs) and evicts its least recently used blocks, tails first. So node
 * ids are freed and handed out again in runs, in-line runs and same-owner bits are made and broken, and owner sets
 * grow dense and shrink back. Also blocks dropped from the middle of a chain, host-tier copies, clears, removed
 * workers, and hash families (engines whose hash seeds differ: the same content under other block hashes, some only
 * from a block on; up to one per engine). After every round every query must get the reference's answer, and at the
 * end so must a replica that recovered the index from its binary dump.
 */
class ChurnDifferentialTest {

    private static final int B = 4;
    /** mixed into the sequence hashes of every family but the first: other, still chained, hashes of one content */
    private static final long FAMILY = 0x5DEECE66DL;
    /**
     * From family 2 on, a family hashes as the family two before it up to a block and differently from there (a salt
     * or adapter that only the later blocks carry): its blocks there are siblings of that family's, under the same
     * parent, with the same content. This is the block.
     */
    private static int fork(int family) {
        return family < 2 ? 0 : 1 + (family * 5) % 11;
    }

    private static final int ROUNDS = 30;
    private static final int QUERIES = 150;

    @ParameterizedTest(name = "seed {0}: {1} instances x {2} ranks, pool {3}, {4} shards")
    @CsvSource({
        "1, 4, 2, 40, 1, 4",
        "2, 12, 8, 48, 2, 4",
        "3, 3, 1, 24, 1, 4",
        "4, 80, 1, 60, 2, 4",
        "7, 26, 1, 60, 1, 4",
        // a family per engine: more nodes at a position than PrefixProbe looks through one by one
        "5, 120, 1, 40, 1, 120",
        "6, 40, 3, 50, 2, 40",
        // a few families: positions of 5 to 16 nodes, grouped by parent since the twenty-fourth round
        "8, 24, 2, 40, 1, 8"
    })
    void theIndexAnswersAsTheReferenceThroughChurn(
            long seed, int instances, int ranks, int pool, int shards, int families) throws Exception {
        SplittableRandom random = new SplittableRandom(seed);
        try (IndexFixture f = new IndexFixture(B, shards, shards)) {
            fixture = f;
            Corpus corpus = new Corpus(random, 60, 40, families, f);
            ReferenceIndex reference = new ReferenceIndex(B);
            Map<WorkerKey, Engine> engines = new HashMap<>();
            List<WorkerKey> workers = new ArrayList<>();
            for (int i = 0; i < instances; i++) {
                for (int r = 0; r < ranks; r++) {
                    WorkerKey w = new WorkerKey(100 + i, r);
                    workers.add(w);
                    engines.put(w, new Engine(i % families, pool));
                }
            }
            long matched = 0;
            for (int round = 0; round < ROUNDS; round++) {
                for (int step = 0; step < 40 * workers.size(); step++) {
                    WorkerKey w = workers.get(random.nextInt(workers.size()));
                    Engine e = engines.get(w);
                    int roll = random.nextInt(1000);
                    if (roll < 2) {
                        f.index.removeWorker(w);
                        reference.removeWorker(w);
                        e.reset();
                        continue;
                    }
                    List<KvEvent> batch = e.step(roll, random, corpus);
                    if (batch.isEmpty()) {
                        continue;
                    }
                    f.index.submit(w, batch);
                    batch.forEach(event -> reference.apply(w, event));
                }
                f.flush();
                assertThat(f.index.stats().memberships())
                        .as("memberships after round %d", round)
                        .isEqualTo(reference.memberships.size());
                assertThat(f.index.stats().blocks())
                        .as("blocks after round %d", round)
                        .isEqualTo(reference.nodes.size());
                matched += assertAnswers(f.index, reference, corpus, random, "round " + round);
            }
            // a replica that recovers this index from its binary dump (staged, numbered in dump order, its in-line
            // and same-owners bits built at the end) answers as the reference too
            try (Indexers replica =
                    new Indexers(new IndexOptions(false, IndexOptions.DEFAULT_WRITER_THREADS, shards))) {
                BinaryReplica.recover(f.index, replica);
                ModelIndex recovered = replica.get("m", "default").orElseThrow();
                assertThat(recovered.stats().memberships()).isEqualTo(reference.memberships.size());
                assertThat(recovered.stats().blocks()).isEqualTo(reference.nodes.size());
                assertAnswers(recovered, reference, corpus, random, "recovered");
            }
            assertThat(matched)
                    .as("the queries must find workers, or the comparison proves little")
                    .isGreaterThan(ROUNDS * QUERIES);
            assertThat(f.applied("removed", ApplyStatus.OK))
                    .as("engines evicted")
                    .isPositive();
        }
    }

    /** Asks {@link #QUERIES} queries of {@code index} and of the reference; returns how many workers they matched. */
    private long assertAnswers(
            ModelIndex index, ReferenceIndex expected, Corpus corpus, SplittableRandom random, String when) {
        long matched = 0;
        for (int q = 0; q < QUERIES; q++) {
            int[] contents = corpus.query(random);
            long[] local = fixture.local(contents);
            Map<WorkerKey, MatchResult.WorkerMatch> actual = IndexFixture.byWorker(index.findMatches(local));
            assertThat(actual)
                    .as("%s, query %d: %s", when, q, Arrays.toString(contents))
                    .isEqualTo(expected.match(local));
            matched += actual.size();
        }
        return matched;
    }

    /** Documents that share prefixes with earlier ones; contents from a small vocabulary, so they repeat. */
    private static final class Corpus {
        final int[][] contents;
        /** per hash family, per document: its blocks' sequence hashes */
        final long[][][] seq;

        Corpus(SplittableRandom random, int docs, int length, int families, IndexFixture f) {
            seq = new long[families][][];
            contents = new int[docs][];
            for (int family = 0; family < families; family++) {
                seq[family] = new long[docs][];
            }
            for (int d = 0; d < docs; d++) {
                int len = 8 + random.nextInt(length - 7);
                contents[d] = new int[len];
                int base = d > 0 ? random.nextInt(d) : 0;
                int shared = d > 0 && random.nextInt(10) < 7 ? random.nextInt(Math.min(len, contents[base].length)) : 0;
                for (int i = 0; i < len; i++) {
                    contents[d][i] = i < shared ? contents[base][i] : 1 + random.nextInt(8);
                }
                long[] local = f.local(contents[d]);
                seq[0][d] = SequenceHasher.sequenceHashes(local);
                for (int family = 1; family < families; family++) {
                    long[] own = seq[family][d] = new long[len];
                    long[] forkedFrom = seq[family - 2 < 0 ? 0 : family - 2][d];
                    for (int i = 0; i < len; i++) {
                        own[i] = i < fork(family)
                                ? forkedFrom[i]
                                : SequenceHasher.next(
                                        i == 0 ? FAMILY * family : own[i - 1] ^ FAMILY * family, local[i]);
                    }
                }
            }
        }

        /** A document's prefix, now and then with a different tail (a prompt that leaves the tree). */
        int[] query(SplittableRandom random) {
            int[] doc = contents[random.nextInt(contents.length)];
            int[] q = Arrays.copyOf(doc, 1 + random.nextInt(doc.length));
            if (random.nextInt(4) == 0) {
                for (int i = random.nextInt(q.length); i < q.length; i++) {
                    q[i] = 1 + random.nextInt(8);
                }
            }
            return q;
        }
    }

    /** An engine's device pool (least recently used first) and the blocks it copied to the host tier. */
    private final class Engine {
        final int family;
        final int pool;
        final LinkedHashMap<Long, Boolean> device = new LinkedHashMap<>(16, 0.75f, true);
        final List<Long> host = new ArrayList<>();
        /** a prompt's blocks still to be stored one at a time, as decode steps fill them: document, next, end */
        int pendingDoc = -1;

        int pendingNext;
        int pendingEnd;

        Engine(int family, int pool) {
            this.family = family;
            this.pool = pool;
        }

        void reset() {
            device.clear();
            host.clear();
            pendingDoc = -1;
        }

        /** One step of this engine, by a roll of 0 to 999 (below 2 the test removes the worker instead). */
        List<KvEvent> step(int roll, SplittableRandom random, Corpus corpus) {
            if (roll < 6) {
                return clear();
            }
            if (roll < 60) {
                return dropSome(random);
            }
            if (roll < 120) {
                return copyToHost(random, corpus);
            }
            return decoding() && roll < 600 ? decode(corpus) : request(random, corpus);
        }

        List<KvEvent> clear() {
            reset();
            return List.of(new AllBlocksCleared());
        }

        /** A prompt: the prefix it holds is touched (tail first), its new blocks stored as one chain. */
        List<KvEvent> request(SplittableRandom random, Corpus corpus) {
            int d = random.nextInt(corpus.contents.length);
            long[] seq = corpus.seq[family][d];
            int len = 1 + random.nextInt(seq.length);
            int held = 0;
            while (held < len && device.containsKey(seq[held])) {
                held++;
            }
            for (int i = held - 1; i >= 0; i--) {
                device.get(seq[i]);
            }
            if (held == len) {
                return List.of();
            }
            List<KvEvent> batch = new ArrayList<>();
            int to = Math.min(len, held + room(len - held, held > 0 ? seq[held - 1] : null, batch));
            if (to <= held) {
                return batch;
            }
            // now and then only the prompt's first blocks at once, the rest one by one in later steps (decode),
            // while other engines store theirs: then a chain's blocks do not get consecutive node ids
            int now = to - held > 1 && random.nextInt(3) == 0 ? held + 1 + random.nextInt(to - held - 1) : to;
            batch.add(stored(corpus, d, held, now, StorageTier.DEVICE));
            for (int i = held; i < now; i++) {
                device.put(seq[i], Boolean.TRUE);
            }
            pendingDoc = now < to ? d : -1;
            pendingNext = now;
            pendingEnd = to;
            return batch;
        }

        boolean decoding() {
            return pendingDoc >= 0;
        }

        /** The next block of the prompt being decoded, under the block before it if the pool still holds that. */
        List<KvEvent> decode(Corpus corpus) {
            long[] seq = corpus.seq[family][pendingDoc];
            long parent = seq[pendingNext - 1];
            if (!device.containsKey(parent)) {
                pendingDoc = -1;
                return List.of();
            }
            device.get(parent);
            List<KvEvent> batch = new ArrayList<>();
            if (room(1, parent, batch) == 0) {
                pendingDoc = -1;
                return batch;
            }
            batch.add(stored(corpus, pendingDoc, pendingNext, pendingNext + 1, StorageTier.DEVICE));
            device.put(seq[pendingNext], Boolean.TRUE);
            if (++pendingNext == pendingEnd) {
                pendingDoc = -1;
            }
            return batch;
        }

        /**
         * Evicts the least recently used blocks (one Removed into {@code batch}) to make room for {@code wanted} new
         * ones, never {@code keep} (the parent they go under); returns how many fit.
         */
        private int room(int wanted, Long keep, List<KvEvent> batch) {
            List<Long> evicted = new ArrayList<>();
            Iterator<Long> lru = device.keySet().iterator();
            int need = device.size() + wanted - pool;
            while (need-- > 0 && lru.hasNext()) {
                long h = lru.next();
                if (keep != null && h == keep) {
                    break; // the parent of what comes is the most recent: the pool is smaller than the prompt
                }
                evicted.add(h);
                lru.remove();
            }
            if (!evicted.isEmpty()) {
                batch.add(new BlockRemoved(
                        evicted.stream().mapToLong(Long::longValue).toArray(), StorageTier.DEVICE));
            }
            return Math.max(0, Math.min(wanted, pool - device.size()));
        }

        /** Blocks dropped from anywhere in the pool (a chain's middle included). */
        List<KvEvent> dropSome(SplittableRandom random) {
            if (device.isEmpty()) {
                return List.of();
            }
            List<Long> all = new ArrayList<>(device.keySet());
            long[] gone = new long[1 + random.nextInt(Math.min(3, all.size()))];
            for (int i = 0; i < gone.length; i++) {
                gone[i] = all.get(random.nextInt(all.size()));
                device.remove(gone[i]);
            }
            return List.of(new BlockRemoved(gone, StorageTier.DEVICE));
        }

        /** A stretch of a document copied to the host tier (under its true parent, known to the index or not). */
        List<KvEvent> copyToHost(SplittableRandom random, Corpus corpus) {
            if (!host.isEmpty() && random.nextInt(3) == 0) {
                long[] gone = {host.remove(random.nextInt(host.size()))};
                return List.of(new BlockRemoved(gone, StorageTier.HOST_PINNED));
            }
            int d = random.nextInt(corpus.contents.length);
            int from = random.nextInt(2) == 0 ? 0 : random.nextInt(corpus.contents[d].length);
            int to = Math.min(corpus.contents[d].length, from + 1 + random.nextInt(6));
            for (int i = from; i < to; i++) {
                host.add(corpus.seq[family][d][i]);
            }
            return List.of(stored(corpus, d, from, to, StorageTier.HOST_PINNED));
        }

        private KvEvent stored(Corpus corpus, int d, int from, int to, StorageTier tier) {
            long[] seq = corpus.seq[family][d];
            return fixture.storedEvent(
                    tier,
                    from == 0 ? null : seq[from - 1],
                    Arrays.copyOfRange(seq, from, to),
                    Arrays.copyOfRange(corpus.contents[d], from, to));
        }
    }

    /** the fixture whose token blocks the engines' events carry (set by the test before it makes engines) */
    private IndexFixture fixture;
}
