package io.kvindexer.indexer.index;

import static io.kvindexer.indexer.index.IndexFixture.w;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockStored;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Hash-only stores (llm-d's shared-storage publisher, vLLM's CPU offload without tokens): they can only join
 * blocks an engine's store made known in this (model, tenant), never create one.
 */
class SharedStorageStoreTest {

    private final IndexFixture f = new IndexFixture(4);
    private final WorkerKey engine = w(1, 0);
    private final WorkerKey storage = w(9, 0);

    @AfterEach
    void close() {
        f.close();
    }

    private static BlockStored hashesOnly(StorageTier tier, long... hashes) {
        return new BlockStored(hashes, false, 0, new int[0], 0, null, tier, null, false);
    }

    @Test
    void joinsKnownBlocksOnTheExternalTierAndCountsTheRest() {
        f.store(engine, null, new long[] {101, 102}, 1, 2);
        f.submit(storage, hashesOnly(StorageTier.EXTERNAL, 101, 102, 999));

        assertThat(f.match(1, 2).get(storage)).isEqualTo(new MatchResult.WorkerMatch(storage, 0, 0, 2));
        assertThat(f.applied("stored", ApplyStatus.UNKNOWN_STORAGE_BLOCK)).isEqualTo(1);
        assertThat(f.index.stats().blocks()).as("999 was never created").isEqualTo(2);
        assertThat(f.index.stats().memberships()).isEqualTo(4);

        f.submit(storage, hashesOnly(StorageTier.EXTERNAL, 101, 102));
        assertThat(f.applied("stored", ApplyStatus.DUPLICATE_STORE)).isEqualTo(1);
    }

    @Test
    void blocksNoEngineStoredAreNotIndexed() {
        f.submit(storage, hashesOnly(StorageTier.EXTERNAL, 101, 102));
        assertThat(f.index.stats().memberships()).isZero();
        assertThat(f.index.stats().blocks()).isZero();
        assertThat(f.applied("stored", ApplyStatus.UNKNOWN_STORAGE_BLOCK)).isEqualTo(1);
    }

    @Test
    void storageKeepsItsBlocksAfterTheEngineEvictsThem() {
        f.store(engine, null, new long[] {101, 102}, 1, 2);
        f.submit(storage, hashesOnly(StorageTier.EXTERNAL, 101, 102));
        f.remove(engine, 101, 102);
        assertThat(f.match(1, 2).get(storage).diskBlocks()).isEqualTo(2);
        assertThat(f.match(1, 2)).doesNotContainKey(engine);
        f.remove(storage, StorageTier.EXTERNAL, 102);
        assertThat(f.match(1, 2).get(storage).diskBlocks()).isEqualTo(1);
    }

    @Test
    void anEnginesOwnTokenlessOffloadJoinsItsHostTier() {
        f.store(engine, null, new long[] {101, 102}, 1, 2);
        f.submit(engine, hashesOnly(StorageTier.HOST_PINNED, 101));
        assertThat(f.match(1, 2).get(engine)).isEqualTo(new MatchResult.WorkerMatch(engine, 2, 2, 2));
        assertThat(f.index.stats().memberships()).isEqualTo(3);
    }
}
