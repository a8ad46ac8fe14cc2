package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An index with several writer shards ({@link ShardedIndex}) answers exactly as one with a single shard: the same
 * random events (stores on every tier with shared, content-addressed prefixes, removes, clears, worker removals,
 * hash-only stores of a shared-storage instance) go to both, and every read is compared.
 */
class ShardedIndexTest {

    private static final int B = 4;
    private static final StorageTier[] TIERS = StorageTier.values();
    private static final WorkerKey STORAGE = new WorkerKey(900, 0);

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5})
    void severalShardsAnswerAsOne(long seed) {
        Random random = new Random(seed);
        List<WorkerKey> workers = new ArrayList<>();
        for (long instance = 1; instance <= 6; instance++) {
            workers.add(new WorkerKey(instance, 0));
            workers.add(new WorkerKey(instance, 1));
        }
        try (IndexFixture one = new IndexFixture(B, 1);
                IndexFixture three = new IndexFixture(B, 3, 3)) {
            Set<Integer> shardsUsed = new HashSet<>();
            for (WorkerKey w : workers) {
                shardsUsed.add(three.writers.threadOf(w.instanceId()));
            }
            assertThat(shardsUsed).as("the workers spread over the shards").hasSizeGreaterThan(1);
            List<int[]> chains = new ArrayList<>();
            for (int round = 0; round < 40; round++) {
                for (int op = 0; op < 15; op++) {
                    WorkerKey worker = workers.get(random.nextInt(workers.size()));
                    KvEvent event = randomEvent(random, one, chains);
                    one.submit(worker, event);
                    three.submit(worker, event);
                    if (random.nextInt(6) == 0 && !chains.isEmpty()) {
                        // the shared-storage instance copies some known blocks, and names one nobody holds
                        int[] chain = chains.get(random.nextInt(chains.size()));
                        long[] hashes = Arrays.copyOf(blockHashes(chain), chain.length + 1);
                        hashes[chain.length] = random.nextLong();
                        BlockStored hashOnly = new BlockStored(
                                hashes, false, 0, new int[0], 0, null, StorageTier.EXTERNAL, null, false);
                        one.submit(STORAGE, hashOnly);
                        three.submit(STORAGE, hashOnly);
                    }
                }
                if (random.nextInt(5) == 0) {
                    WorkerKey gone = workers.get(random.nextInt(workers.size()));
                    one.index.removeWorker(gone).join();
                    three.index.removeWorker(gone).join();
                }
                assertSameAnswers(one, three, chains, random);
            }
        }
    }

    private static KvEvent randomEvent(Random random, IndexFixture f, List<int[]> chains) {
        int kind = random.nextInt(20);
        if (kind == 0) {
            return new AllBlocksCleared();
        }
        StorageTier tier = TIERS[random.nextInt(10) < 6 ? 0 : random.nextInt(TIERS.length)];
        if (kind < 6 && !chains.isEmpty()) {
            int[] chain = chains.get(random.nextInt(chains.size()));
            long[] hashes = blockHashes(chain);
            int from = random.nextInt(hashes.length);
            return new BlockRemoved(Arrays.copyOfRange(hashes, from, hashes.length), tier);
        }
        // a new chain: a known prefix (or none) and a few blocks of a small alphabet, so workers share prefixes
        int[] base = chains.isEmpty() || random.nextBoolean() ? new int[0] : chains.get(random.nextInt(chains.size()));
        int keep = base.length == 0 ? 0 : 1 + random.nextInt(base.length);
        int[] chain = Arrays.copyOf(base, keep + 1 + random.nextInt(4));
        for (int i = keep; i < chain.length; i++) {
            chain[i] = 1 + random.nextInt(4);
        }
        chains.add(chain);
        long[] all = blockHashes(chain);
        long[] stored = Arrays.copyOfRange(all, keep, all.length);
        int[] contents = Arrays.copyOfRange(chain, keep, chain.length);
        return f.storedEvent(tier, keep == 0 ? null : all[keep - 1], stored, contents);
    }

    /** Content-addressed block hashes, as vLLM's: equal prefixes, equal hashes. */
    private static long[] blockHashes(int[] chain) {
        long[] out = new long[chain.length];
        long h = 17;
        for (int i = 0; i < chain.length; i++) {
            h = h * 1_000_003L + chain[i];
            out[i] = h;
        }
        return out;
    }

    private static void assertSameAnswers(IndexFixture one, IndexFixture three, List<int[]> chains, Random random) {
        for (int q = 0; q < 20 && !chains.isEmpty(); q++) {
            int[] chain = chains.get(random.nextInt(chains.size()));
            long[] local = one.local(chain);
            assertThat(three.index.findMatches(local)).isEqualTo(one.index.findMatches(local));
        }
        IndexStats a = one.index.stats();
        IndexStats b = three.index.stats();
        assertThat(b.blocks()).as("distinct blocks").isEqualTo(a.blocks());
        assertThat(b.memberships()).isEqualTo(a.memberships());
        assertThat(b.applied()).isEqualTo(a.applied());
        assertThat(dump(three)).containsExactlyInAnyOrderElementsOf(dump(one));
        assertThat(tiersInDumpOrder(three)).isSorted();
        assertThat(workerBlocks(three)).isEqualTo(workerBlocks(one));
        assertThat(three.index.survey().sharedPrefixes(10_000))
                .isEqualTo(one.index.survey().sharedPrefixes(10_000));
    }

    private static List<String> dump(IndexFixture f) {
        List<String> out = new ArrayList<>();
        f.index.dump((worker, tier, hasParent, parent, blockHash, localHash) ->
                out.add(worker + " " + tier + " " + hasParent + " " + parent + " " + blockHash + " " + localHash));
        return out;
    }

    private static List<Integer> tiersInDumpOrder(IndexFixture f) {
        List<Integer> out = new ArrayList<>();
        f.index.dump((worker, tier, hasParent, parent, blockHash, localHash) -> out.add(tier.ordinal()));
        return out;
    }

    private static List<String> workerBlocks(IndexFixture f) {
        return f.index.survey().workerBlocks().stream()
                .map(w -> w.worker() + " " + Arrays.toString(w.blocksByTier()))
                .toList();
    }
}
