package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockRemoved;
import io.kvindexer.indexer.event.KvEvent;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Recovery's staging ({@link ModelIndex#stageRecords}, {@link ModelIndex#finishStaging}, {@link ModelIndex#adopt})
 * builds an index that answers every query as its source does: the source's dump, cut into small frames of records,
 * is staged into a detached index and adopted by an empty one. The source holds chains on every tier of a small
 * alphabet whose blocks take one of two hash seeds (equal content prefixes under different block hashes, even under
 * one parent), with removes that leave children under missing parents: what decides the prefix table and the in-line
 * bits that staging builds at the end. The staged index numbers its nodes in dump order, not in its source's order,
 * so a worker's equally deep runs on one tier (same contents, other seeds) must all be continued on the next.
 */
class StagedRecordsTest {

    private static final int B = 4;

    @ParameterizedTest
    @CsvSource({"1, 1, 0", "2, 1, 1", "3, 2, 1", "4, 3, 0", "5, 1, 40", "6, 2, 40", "7, 3, 1", "8, 1, 0", "9, 1, -1"})
    void anAdoptedStagedIndexAnswersAsItsSource(long seed, int shards, int hintFactor) {
        Random random = new Random(seed);
        List<WorkerKey> workers = new ArrayList<>();
        for (long instance = 1; instance <= 4; instance++) {
            workers.add(new WorkerKey(instance, 0));
            workers.add(new WorkerKey(instance, 1));
        }
        try (IndexFixture source = new IndexFixture(B, shards, shards)) {
            List<Chain> chains = new ArrayList<>();
            for (int op = 0; op < 600; op++) {
                WorkerKey worker = workers.get(random.nextInt(workers.size()));
                source.submit(worker, randomEvent(random, source, chains));
            }
            ModelIndex staged = newIndex(source, shards);
            if (hintFactor > 0) { // the peer's block count (exact, or stale and far too high): only a hint
                staged.expectBlocks(source.index.stats().blocks() * (long) hintFactor);
            } else if (hintFactor < 0) { // an absurd one must not take the heap
                staged.expectBlocks(Long.MAX_VALUE);
            }
            stage(source.index, staged, 1 + random.nextInt(7));
            staged.finishStaging();
            staged.flush().join();
            ModelIndex adopted = newIndex(source, shards);
            adopted.adopt(staged);

            assertThat(adopted.stats().memberships())
                    .isEqualTo(source.index.stats().memberships());
            int compared = 0;
            for (Chain chain : chains) {
                int[] contents = chain.contents();
                for (int n = 1; n <= contents.length; n++) {
                    long[] query = source.local(Arrays.copyOf(contents, n));
                    assertThat(IndexFixture.byWorker(adopted.findMatches(query)))
                            .as("query %s", Arrays.toString(Arrays.copyOf(contents, n)))
                            .isEqualTo(IndexFixture.byWorker(source.index.findMatches(query)));
                    compared++;
                }
            }
            assertThat(compared).isGreaterThan(1_000);
        }
    }

    private static ModelIndex newIndex(IndexFixture like, int shards) {
        return new ModelIndex(
                "m", "default", B, new IndexOptions(false, IndexOptions.DEFAULT_WRITER_THREADS, shards), like.writers);
    }

    /** The source's dump as records (consecutive memberships of one block are one record), {@code perFrame} a frame. */
    private static void stage(ModelIndex source, ModelIndex staged, int perFrame) {
        DumpRecords.Builder records = new DumpRecords.Builder();
        Map<WorkerKey, Integer> refs = new HashMap<>();
        List<WorkerKey> byRef = new ArrayList<>();
        long[] last = {Long.MIN_VALUE};
        int[] inFrame = {0};
        source.dump((worker, tier, hasParent, parent, block, local) -> {
            if (block != last[0] || inFrame[0] == 0) {
                if (inFrame[0] == perFrame) {
                    staged.stageRecords(records.build(byRef.toArray(new WorkerKey[0])));
                    inFrame[0] = 0;
                }
                records.block(hasParent, parent, block, local);
                last[0] = block;
                inFrame[0]++;
            }
            int ref = refs.computeIfAbsent(worker, w -> {
                byRef.add(w);
                return byRef.size() - 1;
            });
            records.owner(ref, tier);
        });
        if (!records.isEmpty()) {
            staged.stageRecords(records.build(byRef.toArray(new WorkerKey[0])));
        }
    }

    private static KvEvent randomEvent(Random random, IndexFixture f, List<Chain> chains) {
        StorageTier tier = StorageTier.values()[random.nextInt(StorageTier.values().length)];
        if (random.nextInt(4) == 0 && !chains.isEmpty()) {
            long[] hashes = chains.get(random.nextInt(chains.size())).hashes();
            int from = random.nextInt(hashes.length);
            int to = from + 1 + random.nextInt(hashes.length - from); // a middle run too: orphans its children
            return new BlockRemoved(Arrays.copyOfRange(hashes, from, to), tier);
        }
        // a known prefix (or none) and a few blocks of a small alphabet, so workers share prefixes; the new blocks'
        // hashes under one of two seeds, so equal contents under one parent can be different blocks
        Chain base = chains.isEmpty() || random.nextBoolean() ? null : chains.get(random.nextInt(chains.size()));
        int keep = base == null ? 0 : random.nextInt(base.contents().length);
        int length = keep + 1 + random.nextInt(5);
        int[] contents = Arrays.copyOf(base == null ? new int[0] : base.contents(), length);
        long[] hashes = Arrays.copyOf(base == null ? new long[0] : base.hashes(), length);
        long seed = random.nextInt(2);
        for (int i = keep; i < length; i++) {
            contents[i] = 1 + random.nextInt(3);
            hashes[i] = (i == 0 ? 17 : hashes[i - 1]) * 1_000_003L + contents[i] + seed * 7_919;
        }
        chains.add(new Chain(contents, hashes));
        return f.storedEvent(
                tier,
                keep == 0 ? null : hashes[keep - 1],
                Arrays.copyOfRange(hashes, keep, length),
                Arrays.copyOfRange(contents, keep, length));
    }

    /** A stored chain: its blocks' contents and block hashes. */
    private record Chain(int[] contents, long[] hashes) {}
}
