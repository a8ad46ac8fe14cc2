package io.kvindexer.indexer.index;

import static io.kvindexer.indexer.index.IndexFixture.w;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The console's walks: blocks per worker and tier, and where shared prefixes end, on small known trees. */
class CacheSurveyTest {

    private static final WorkerKey A = w(1, 0);
    private static final WorkerKey B = w(2, 0);
    private static final WorkerKey C = w(3, 1);

    /**
     * A and B hold the system prompt 101..104 on device, A continues with 201, 202 and B with 301; C holds 101, 102
     * on device and 101..104 on the host tier.
     */
    private static IndexFixture sharedSystemPrompt() {
        IndexFixture f = new IndexFixture(4);
        long[] system = {101, 102, 103, 104};
        f.store(A, null, system, 1, 2, 3, 4);
        f.store(A, 104L, new long[] {201, 202}, 5, 6);
        f.store(B, null, system, 1, 2, 3, 4);
        f.store(B, 104L, new long[] {301}, 7);
        f.store(C, null, new long[] {101, 102}, 1, 2);
        f.store(C, StorageTier.HOST_PINNED, null, system, 1, 2, 3, 4);
        return f;
    }

    @Test
    void countsBlocksPerWorkerAndTier() {
        try (IndexFixture f = sharedSystemPrompt()) {
            List<CacheSurvey.WorkerBlocks> blocks = f.index.survey().workerBlocks();

            assertThat(blocks).extracting(CacheSurvey.WorkerBlocks::worker).containsExactly(A, B, C);
            assertThat(blocks.get(0).blocksByTier()).containsExactly(6, 0, 0, 0);
            assertThat(blocks.get(1).blocksByTier()).containsExactly(5, 0, 0, 0);
            assertThat(blocks.get(2).blocksByTier()).containsExactly(2, 4, 0, 0);
            long sum = blocks.stream()
                    .mapToLong(b -> IntStream.range(0, 4)
                            .mapToLong(t -> b.blocksByTier()[t])
                            .sum())
                    .sum();
            assertThat(sum).isEqualTo(f.index.stats().memberships());
        }
    }

    @Test
    void sharedPrefixesEndWhereFewerWorkersHoldTheNextBlock() {
        try (IndexFixture f = sharedSystemPrompt()) {
            List<CacheSurvey.SharedPrefix> prefixes = f.index.survey().sharedPrefixes(10);

            // 101..103 are not listed: the same three workers hold the block after each of them
            assertThat(prefixes).extracting(CacheSurvey.SharedPrefix::blockHash).containsExactly(104L, 202L, 301L);
            assertThat(prefixes).extracting(CacheSurvey.SharedPrefix::depth).containsExactly(4, 6, 5);
            assertThat(prefixes).extracting(CacheSurvey.SharedPrefix::workers).containsExactly(3, 1, 1);
            assertThat(prefixes.get(0).holders()).containsExactly(A, B, C);
            assertThat(prefixes.get(1).holders()).containsExactly(A);
            assertThat(f.index.survey().sharedPrefixes(1))
                    .extracting(CacheSurvey.SharedPrefix::blockHash)
                    .containsExactly(104L);
            assertThat(f.index.survey().sharedPrefixes(0)).isEmpty();
        }
    }

    @Test
    void removedBlocksAndWorkersLeaveTheSurvey() {
        try (IndexFixture f = sharedSystemPrompt()) {
            f.remove(A, 202);
            f.index.removeWorker(C).join();
            f.flush();

            assertThat(f.index.survey().workerBlocks())
                    .extracting(CacheSurvey.WorkerBlocks::worker)
                    .containsExactly(A, B);
            assertThat(f.index.survey().workerBlocks().get(0).blocks(StorageTier.DEVICE))
                    .isEqualTo(5);
            List<CacheSurvey.SharedPrefix> prefixes = f.index.survey().sharedPrefixes(10);
            assertThat(prefixes).extracting(CacheSurvey.SharedPrefix::blockHash).containsExactly(104L, 201L, 301L);
            assertThat(prefixes).extracting(CacheSurvey.SharedPrefix::depth).containsExactly(4, 5, 5);
            assertThat(prefixes.get(0).holders()).containsExactly(A, B);
        }
    }

    @Test
    void walksEveryChunkOfALargeIndex() {
        try (IndexFixture f = new IndexFixture(1)) {
            int chains = 3 * CacheSurvey.CHUNK / 100 + 7; // more nodes than three chunks
            for (int chain = 0; chain < chains; chain++) {
                int c = chain;
                long[] seq = LongRange.of(1_000_000L * (c + 1), 100);
                int[] contents =
                        IntStream.range(0, 100).map(i -> c * 100 + i + 1).toArray();
                f.store(c % 2 == 0 ? A : B, null, seq, contents);
            }
            // one deep chain that both hold, stored last so that its nodes sit in the last chunk
            f.store(
                    A,
                    null,
                    LongRange.of(7L, 150),
                    IntStream.rangeClosed(1, 150).map(i -> -i).toArray());
            f.store(
                    B,
                    null,
                    LongRange.of(7L, 150),
                    IntStream.rangeClosed(1, 150).map(i -> -i).toArray());

            List<CacheSurvey.WorkerBlocks> blocks = f.index.survey().workerBlocks();
            assertThat(blocks.get(0).blocks(StorageTier.DEVICE)).isEqualTo(100L * ((chains + 1) / 2) + 150);
            assertThat(blocks.get(1).blocks(StorageTier.DEVICE)).isEqualTo(100L * (chains / 2) + 150);
            List<CacheSurvey.SharedPrefix> prefixes = f.index.survey().sharedPrefixes(3);
            assertThat(prefixes.get(0)).isEqualTo(new CacheSurvey.SharedPrefix(150, 2, 7L + 149, List.of(A, B)));
            assertThat(prefixes.subList(1, 3)).allSatisfy(p -> {
                assertThat(p.depth()).isEqualTo(100);
                assertThat(p.workers()).isEqualTo(1);
            });
        }
    }

    @Test
    void walksWhileWritersStoreAndEvictWithoutFailingOrInventingHolders() throws Exception {
        try (IndexFixture f = new IndexFixture(1)) {
            Thread writer = Thread.ofPlatform().start(() -> {
                for (int round = 0; round < 400; round++) {
                    WorkerKey w = round % 2 == 0 ? A : B;
                    long base = 10_000L * (round % 20 + 1);
                    int[] contents =
                            IntStream.range(0, 50).map(i -> (int) base + i).toArray();
                    f.index.submit(
                            w, List.of(f.storedEvent(StorageTier.DEVICE, null, LongRange.of(base, 50), contents)));
                    if (round % 3 == 0) {
                        f.index.submit(
                                w,
                                List.of(new io.kvindexer.indexer.event.BlockRemoved(
                                        LongRange.of(base + 25, 25), StorageTier.DEVICE)));
                    }
                }
                f.flush();
            });
            int walks = 0;
            while (writer.isAlive() || walks < 3) {
                for (CacheSurvey.SharedPrefix p : f.index.survey().sharedPrefixes(10)) {
                    assertThat(p.depth()).isBetween(1, 50);
                    assertThat(p.workers()).isBetween(1, 2);
                    assertThat(p.holders()).hasSize(p.workers()).isSubsetOf(A, B);
                }
                assertThat(f.index.survey().workerBlocks())
                        .allSatisfy(
                                b -> assertThat(b.blocks(StorageTier.DEVICE)).isBetween(0L, 20L * 50));
                walks++;
            }
            writer.join();
            long held = f.index.survey().workerBlocks().stream()
                    .mapToLong(b -> b.blocks(StorageTier.DEVICE))
                    .sum();
            assertThat(held).isEqualTo(f.index.stats().memberships());
        }
    }

    /** Consecutive sequence hashes. */
    private static final class LongRange {
        static long[] of(long first, int n) {
            return java.util.stream.LongStream.range(first, first + n).toArray();
        }
    }
}
