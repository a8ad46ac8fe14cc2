package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.AllBlocksCleared;
import io.kvindexer.indexer.event.BlockStored;
import java.util.Map;
import java.util.stream.IntStream;
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

    /** One block of {@code content} tokens, with its own {@code salt} or none. */
    private static BlockStored store(long hash, Long parent, int content, String salt) {
        return new BlockStored(
                new long[] {hash},
                parent != null,
                parent == null ? 0 : parent,
                IntStream.generate(() -> content).limit(BLOCK).toArray(),
                BLOCK,
                null,
                null,
                StorageTier.DEVICE,
                null,
                false,
                salt);
    }

    private static void storeBoth(IndexFixture f) {
        // a salted request: the salt on its first store only, the next chunk hangs under it
        f.submit(SALTED, store(11, null, 1, "tenant-a"));
        f.submit(SALTED, store(12, 11L, 2, null), store(13, 12L, 3, null));
        // the same tokens, no salt
        f.submit(PLAIN, store(21, null, 1, null), store(22, 21L, 2, null));
    }

    @Test
    void aSaltedRequestMatchesOnlyQueriesWithItsSaltChildrenIncluded() {
        try (IndexFixture f = new IndexFixture(BLOCK, new IndexOptions(true, 1))) {
            storeBoth(f);
            assertThat(f.deviceScores("tenant-a", 1, 2, 3)).isEqualTo(Map.of(SALTED, 3));
            assertThat(f.deviceScores(1, 2, 3)).isEqualTo(Map.of(PLAIN, 2));
            assertThat(f.deviceScores("tenant-b", 1, 2, 3)).isEmpty();

            // a cleared cache forgets the salts with the blocks: a store under an unknown parent stays unsalted
            f.submit(SALTED, new AllBlocksCleared());
            f.submit(SALTED, store(12, 11L, 2, null));
            assertThat(f.deviceScores("tenant-a", 1, 2, 3)).isEmpty();
        }
    }

    /**
     * One engine hash stored with two salts (an engine whose hashes leave the salt out): Dynamo refuses a store under
     * it that names no salt of its own, as its parent's salt is ambiguous. Here the second store is refused as one
     * hash with two contents, and the child, hashed with the last salt seen, hangs under the first: no query matches
     * it with either salt, the same answers.
     */
    @Test
    void aChildUnderAHashStoredWithTwoSaltsMatchesNoQuery() {
        try (IndexFixture f = new IndexFixture(BLOCK, new IndexOptions(true, 1))) {
            f.submit(SALTED, store(11, null, 1, "tenant-a"));
            f.submit(SALTED, store(11, null, 1, "tenant-b"));
            f.submit(SALTED, store(12, 11L, 2, null));
            assertThat(f.deviceScores("tenant-a", 1, 2)).isEqualTo(Map.of(SALTED, 1));
            assertThat(f.deviceScores("tenant-b", 1, 2)).isEmpty();
            assertThat(f.deviceScores(1, 2)).isEmpty();
        }
    }

    @Test
    void withoutMixingEventSaltsAreIgnoredAsQueriesAreDynamoG2() {
        try (IndexFixture f = new IndexFixture(BLOCK, IndexOptions.defaults())) {
            storeBoth(f);
            assertThat(f.deviceScores("tenant-a", 1, 2, 3)).isEqualTo(Map.of(SALTED, 3, PLAIN, 2));
            assertThat(f.deviceScores(1, 2, 3)).isEqualTo(Map.of(SALTED, 3, PLAIN, 2));
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
        BlockStored hashOnly = new BlockStored(
                new long[] {15}, true, 11, new int[0], 0, null, null, StorageTier.DISK, null, false, null);
        assertThat(hashOnly.hashesOnly()).isTrue();
        assertThat(salts.forStore(SALTED, hashOnly)).as("a hash-only copy").isNull();
        assertThat(salts.size(SALTED)).as("leaves the salts alone").isEqualTo(2);
        salts.forget(SALTED);
        assertThat(salts.forStore(SALTED, store(12, 11L, 2, null))).isNull();

        long[] many = new long[CacheSalts.MAX_PER_WORKER];
        for (int i = 0; i < many.length; i++) {
            many[i] = 1000 + i;
        }
        salts.forStore(SALTED, store(1, null, 1, "s"));
        salts.forStore(
                SALTED,
                new BlockStored(
                        many, false, 0, new int[many.length], 1, null, null, StorageTier.DEVICE, null, false, "s"));
        assertThat(salts.size(SALTED)).as("over the bound it starts again").isEqualTo(many.length);
        assertThat(salts.forStore(SALTED, store(2, 1L, 2, null))).isNull();

        salts.forStore(new WorkerKey(5, 0), store(3, null, 1, "s"));
        salts.forStore(new WorkerKey(5, 1), store(4, null, 1, "s"));
        salts.forgetInstance(5);
        assertThat(salts.size(new WorkerKey(5, 0)) + salts.size(new WorkerKey(5, 1)))
                .isZero();
    }
}
