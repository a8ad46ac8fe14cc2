package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.event.KvEvent;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * With {@code --mix-cache-salt}, a store is hashed with the cache salt its event carries, and a store under a
 * salted block with that block's salt (vLLM names a request's salt on its first block only), so a query that sends
 * the salt matches them and one that does not, or sends another, does not (Dynamo G3).
 */
class CacheSaltStoresTest {

    private static final int BLOCK = 4;
    private static final WorkerKey SALTED = new WorkerKey(1, 0);
    private static final WorkerKey PLAIN = new WorkerKey(2, 0);

    private static int[] tokens(int... contents) {
        int[] out = new int[contents.length * BLOCK];
        for (int b = 0; b < contents.length; b++) {
            java.util.Arrays.fill(out, b * BLOCK, (b + 1) * BLOCK, contents[b]);
        }
        return out;
    }

    private static BlockStored store(long hash, Long parent, int content, String salt) {
        return new BlockStored(
                new long[] {hash},
                parent != null,
                parent == null ? 0 : parent,
                tokens(content),
                BLOCK,
                null,
                null,
                StorageTier.DEVICE,
                null,
                false,
                salt);
    }

    private static void submit(ModelIndex index, WorkerKey worker, KvEvent... events) {
        index.submit(worker, List.of(events));
        index.flush().orTimeout(60, TimeUnit.SECONDS).join();
    }

    /** Device blocks matched per worker for the prompt of blocks 1, 2, 3, with {@code salt}. */
    private static Map<WorkerKey, Integer> match(ModelIndex index, String salt) {
        Map<WorkerKey, Integer> out = new HashMap<>();
        for (MatchResult.WorkerMatch m : index.findMatches(index.localHashes(tokens(1, 2, 3), null, salt))
                .workers()) {
            if (m.deviceBlocks() > 0) {
                out.put(m.worker(), m.deviceBlocks());
            }
        }
        return out;
    }

    private static void storeBoth(ModelIndex index) {
        // a salted request: the salt on its first store only, the next chunk hangs under it
        submit(index, SALTED, store(11, null, 1, "tenant-a"));
        submit(index, SALTED, store(12, 11L, 2, null), store(13, 12L, 3, null));
        // the same tokens, no salt
        submit(index, PLAIN, store(21, null, 1, null), store(22, 21L, 2, null));
    }

    @Test
    void aSaltedRequestMatchesOnlyQueriesWithItsSaltChildrenIncluded() {
        try (IndexWriters writers = new IndexWriters(1)) {
            ModelIndex index = new ModelIndex("m", "t", BLOCK, new IndexOptions(true, 1), writers);
            storeBoth(index);
            assertThat(match(index, "tenant-a")).isEqualTo(Map.of(SALTED, 3));
            assertThat(match(index, null)).isEqualTo(Map.of(PLAIN, 2));
            assertThat(match(index, "tenant-b")).isEmpty();

            // a cleared cache forgets the salts with the blocks: a store under an unknown parent stays unsalted
            submit(index, SALTED, new AllBlocksCleared());
            submit(index, SALTED, store(12, 11L, 2, null));
            assertThat(match(index, "tenant-a")).isEmpty();
        }
    }

    @Test
    void withoutMixingEventSaltsAreIgnoredAsQueriesAreDynamoG2() {
        try (IndexWriters writers = new IndexWriters(1)) {
            ModelIndex index = new ModelIndex("m", "t", BLOCK, IndexOptions.defaults(), writers);
            storeBoth(index);
            assertThat(match(index, "tenant-a")).isEqualTo(Map.of(SALTED, 3, PLAIN, 2));
            assertThat(match(index, null)).isEqualTo(Map.of(SALTED, 3, PLAIN, 2));
        }
    }

    @Test
    void theSaltsKeptAreBoundedAndForgottenWithTheirWorker() {
        CacheSalts salts = new CacheSalts();
        assertThat(salts.forStore(SALTED, store(11, null, 1, "s"))).isEqualTo("s");
        assertThat(salts.forStore(SALTED, store(12, 11L, 2, null))).isEqualTo("s");
        assertThat(salts.forStore(SALTED, store(13, 99L, 3, null)))
                .as("an unknown parent")
                .isNull();
        assertThat(salts.forStore(PLAIN, store(14, 11L, 2, null)))
                .as("another worker's block")
                .isNull();
        assertThat(salts.size(SALTED)).isEqualTo(2);
        salts.forget(SALTED);
        assertThat(salts.forStore(SALTED, store(12, 11L, 2, null))).isNull();

        long[] many = new long[CacheSalts.MAX_PER_WORKER];
        for (int i = 0; i < many.length; i++) {
            many[i] = 1000 + i;
        }
        salts.forStore(SALTED, store(1, null, 1, "s"));
        salts.forStore(
                SALTED,
                new BlockStored(many, false, 0, new int[0], 0, null, null, StorageTier.DEVICE, null, false, "s"));
        assertThat(salts.size(SALTED)).as("over the bound it starts again").isEqualTo(many.length);
        assertThat(salts.forStore(SALTED, store(2, 1L, 2, null))).isNull();

        salts.forStore(new WorkerKey(5, 0), store(3, null, 1, "s"));
        salts.forStore(new WorkerKey(5, 1), store(4, null, 1, "s"));
        salts.forgetInstance(5);
        assertThat(salts.size(new WorkerKey(5, 0)) + salts.size(new WorkerKey(5, 1)))
                .isZero();
    }
}
