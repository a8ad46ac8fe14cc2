package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.event.BlockStored;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class IndexersTest {

    @Test
    void firstRegistrationFixesTheBlockSize() throws Exception {
        try (Indexers indexers = new Indexers(IndexOptions.defaults())) {
            ModelIndex index = indexers.getOrCreate("llama", "default", 16);
            assertThat(indexers.getOrCreate("llama", "default", 16)).isSameAs(index);
            assertThatThrownBy(() -> indexers.getOrCreate("llama", "default", 32))
                    .isInstanceOf(Indexers.BlockSizeMismatchException.class)
                    .hasMessage("block_size mismatch for model=llama tenant=default: existing=16, requested=32")
                    .extracting(e -> ((Indexers.BlockSizeMismatchException) e).existing())
                    .isEqualTo(16);
            assertThat(indexers.getOrCreate("llama", "other", 32).blockSize()).isEqualTo(32);
        }
    }

    @Test
    void allIsOrderedByModelThenTenantAndRemoveDrops() throws Exception {
        try (Indexers indexers = new Indexers(IndexOptions.defaults())) {
            indexers.getOrCreate("b", "t2", 4);
            indexers.getOrCreate("a", "t9", 4);
            indexers.getOrCreate("b", "t1", 4);
            indexers.getOrCreate("a:x", "t", 4);
            assertThat(indexers.all())
                    .extracting(i -> i.modelName() + "/" + i.tenantId())
                    .containsExactly("a/t9", "a:x/t", "b/t1", "b/t2");
            indexers.remove("b", "t1");
            assertThat(indexers.get("b", "t1")).isEmpty();
            assertThat(indexers.get("b", "t2")).isPresent();
            assertThat(indexers.all()).hasSize(3);
        }
    }

    @Test
    void flushAllMakesWritesOfEveryIndexVisible() throws Exception {
        try (Indexers indexers = new Indexers(new IndexOptions(false, 3))) {
            ModelIndex a = indexers.getOrCreate("a", "default", 4);
            ModelIndex b = indexers.getOrCreate("b", "default", 4);
            for (long instance = 0; instance < 20; instance++) {
                for (ModelIndex index : List.of(a, b)) {
                    index.submit(
                            new WorkerKey(instance, 0),
                            List.of(new BlockStored(
                                    new long[] {instance + 1},
                                    false,
                                    0,
                                    new int[] {1, 2, 3, 4},
                                    4,
                                    null,
                                    StorageTier.DEVICE,
                                    null,
                                    false)));
                }
            }
            indexers.flushAll().orTimeout(60, TimeUnit.SECONDS).join();
            assertThat(a.findMatches(a.localHashes(new int[] {1, 2, 3, 4}, null, null))
                            .workers())
                    .hasSize(20);
            assertThat(b.stats().memberships()).isEqualTo(20);
            assertThat(b.stats().blocks()).isEqualTo(20);
        }
    }
}
