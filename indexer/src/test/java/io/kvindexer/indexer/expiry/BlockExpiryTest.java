package io.kvindexer.indexer.expiry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.common.WorkerKey;
import io.kvindexer.indexer.index.IndexOp;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import io.kvindexer.indexer.index.StoreTimes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * Block expiry against the index alone (no sockets): sweeps longer than one step, what survives a capacity cut,
 * and the memory it keeps once a worker is gone.
 */
class BlockExpiryTest {

    private static final WorkerKey W = new WorkerKey(7, 0);
    private static final int N = 3 * BlockExpiry.CHUNK + 100;

    @Test
    void aCapacityCutLongerThanOneStepKeepsExactlyTheNewestNinetyPercent() throws Exception {
        try (BlockExpiry expiry = new BlockExpiry(new ExpiryPolicy(Map.of(), 1000));
                Indexers indexers = new Indexers(IndexOptions.defaults(), expiry)) {
            ModelIndex ix = indexers.getOrCreate("m", "t", 4);
            ix.submitOps(W, List.of(store(StorageTier.EXTERNAL, 0, N)));
            await().atMost(Duration.ofSeconds(30)).until(() -> ix.stats().memberships() == 900);
            ix.flush().get(30, TimeUnit.SECONDS);
            assertThat(ix.stats().memberships()).isEqualTo(900);
            List<Long> held = new ArrayList<>();
            ix.dump((worker, tier, hasParent, parent, blockHash, localHash) -> held.add(blockHash));
            assertThat(held)
                    .containsExactlyInAnyOrderElementsOf(LongStream.range(N - 900, N)
                            .map(BlockExpiryTest::hash)
                            .boxed()
                            .toList());
            assertThat(expiry.expired(StorageTier.EXTERNAL, ExpiryReason.CAPACITY))
                    .isEqualTo(N - 900);
            assertThat(expiry.followedBlocks()).isEqualTo(900);
        }
    }

    @Test
    void aTtlSweepLongerThanOneStepRemovesEverythingAndForgetsTheWorker() throws Exception {
        try (BlockExpiry expiry =
                        new BlockExpiry(new ExpiryPolicy(Map.of(StorageTier.DISK, Duration.ofMillis(200)), 0));
                Indexers indexers = new Indexers(IndexOptions.defaults(), expiry)) {
            ModelIndex ix = indexers.getOrCreate("m", "t", 4);
            // device blocks have no TTL here: they stay and are not even followed
            ix.submitOps(W, List.of(store(StorageTier.DISK, 0, N), store(StorageTier.DEVICE, 0, 10)));
            await().atMost(Duration.ofSeconds(30)).until(() -> ix.stats().memberships() == 10);
            assertThat(expiry.expired(StorageTier.DISK, ExpiryReason.TTL)).isEqualTo(N);
            assertThat(expiry.followedBlocks()).isZero();
            assertThat(ix.stats().applied().get("removed").get("ok"))
                    .as("one remove op per step: the sweep was chunked")
                    .isGreaterThanOrEqualTo(N / BlockExpiry.CHUNK);
        }
    }

    @Test
    void anUnregisteredWorkerIsForgottenAndAClearEmptiesItsTiers() throws Exception {
        try (BlockExpiry expiry = new BlockExpiry(new ExpiryPolicy(Map.of(StorageTier.DISK, Duration.ofHours(1)), 0));
                Indexers indexers = new Indexers(IndexOptions.defaults(), expiry)) {
            ModelIndex ix = indexers.getOrCreate("m", "t", 4);
            WorkerKey other = new WorkerKey(8, 0);
            ix.submitOps(W, List.of(store(StorageTier.DISK, 0, 50)));
            ix.submitOps(other, List.of(store(StorageTier.DISK, 0, 30)));
            ix.flush().get(30, TimeUnit.SECONDS);
            assertThat(expiry.followedBlocks()).isEqualTo(80);
            ix.removeWorker(W).get(30, TimeUnit.SECONDS);
            assertThat(expiry.followedBlocks()).isEqualTo(30);
            ix.submitOps(other, List.of(new IndexOp.Clear()));
            ix.flush().get(30, TimeUnit.SECONDS);
            assertThat(expiry.followedBlocks()).isZero();
            ix.submitOps(other, List.of(store(StorageTier.DISK, 0, 5)));
            ix.flush().get(30, TimeUnit.SECONDS);
            indexers.remove("m", "t");
            assertThat(expiry.followedBlocks()).isZero();
        }
    }

    @Test
    void ttlFlagSpellingAndItsErrors() {
        assertThat(ExpiryPolicy.parseTtl("host_pinned=10m, disk=6h,external=500ms"))
                .containsExactly(
                        Map.entry(StorageTier.HOST_PINNED, Duration.ofMinutes(10)),
                        Map.entry(StorageTier.DISK, Duration.ofHours(6)),
                        Map.entry(StorageTier.EXTERNAL, Duration.ofMillis(500)));
        assertThat(new ExpiryPolicy(ExpiryPolicy.parseTtl("device=30s,disk=90m"), 0).ttlText())
                .isEqualTo("device=30s,disk=90m");
        assertThat(ExpiryPolicy.parseTtl(null)).isEmpty();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ExpiryPolicy.parseTtl("cpu=10m"))
                .hasMessageContaining("unknown tier 'cpu' (expected device, host_pinned, disk, external)");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ExpiryPolicy.parseTtl("disk=0"))
                .hasMessageContaining("must be > 0");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ExpiryPolicy.parseTtl("disk=10"))
                .hasMessageContaining("'10' is not a duration");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ExpiryPolicy.parseTtl("disk=1m,disk=2m"))
                .hasMessageContaining("given twice");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ExpiryPolicy.parseTtl("disk"))
                .hasMessageContaining("not TIER=DURATION");
        assertThat(new ExpiryPolicy(Map.of(), 200_000).evictDownTo()).isEqualTo(180_000);
        assertThat(ExpiryPolicy.NONE.enabled()).isFalse();
    }

    /**
     * Recovery's last-store times start a recovered block's clock there (one an hour old on a 10-minute TTL goes at
     * the next sweep), but a block the worker already stored live keeps its later time.
     */
    @Test
    void recoveredTimesStartTheClockAtTheLastStoreButNeverTakeALaterStoreBack() throws Exception {
        try (BlockExpiry expiry =
                        new BlockExpiry(new ExpiryPolicy(Map.of(StorageTier.DISK, Duration.ofMinutes(10)), 0));
                Indexers indexers = new Indexers(IndexOptions.defaults(), expiry)) {
            ModelIndex ix = indexers.getOrCreate("m", "t", 4);
            ix.submitOps(W, List.of(store(StorageTier.DISK, 0, 1))); // block 0 stored live, now
            ix.flush().get(30, TimeUnit.SECONDS);
            ModelIndex staged = indexers.detached("m", "t", 4);
            staged.submitOps(W, List.of(store(StorageTier.DISK, 0, 3)));
            staged.flush().get(30, TimeUnit.SECONDS);
            long hourAgo = System.currentTimeMillis() - 3_600_000;
            StoreTimes times = new StoreTimes();
            times.times(W, StorageTier.DISK, new long[] {hash(0), hash(1)}, new long[] {hourAgo, hourAgo});
            ix.adopt(staged, times);
            // block 1 (an hour old) goes; block 0 keeps its live store, block 2 (no time) starts now
            await().atMost(Duration.ofSeconds(30)).until(() -> expiry.expired(StorageTier.DISK, ExpiryReason.TTL) == 1);
            Thread.sleep(1_500); // more sweeps: nothing else goes
            ix.flush().get(30, TimeUnit.SECONDS);
            List<Long> held = new ArrayList<>();
            ix.dump((worker, tier, hasParent, parent, blockHash, localHash) -> held.add(blockHash));
            assertThat(held).containsExactlyInAnyOrder(hash(0), hash(2));
            assertThat(expiry.expired(StorageTier.DISK, ExpiryReason.TTL)).isEqualTo(1);
        }
    }

    /** A root-less chain of hash-ready blocks {@code from .. from + n} (a recovered store, so no parent is needed). */
    private static IndexOp store(StorageTier tier, long from, long n) {
        long[] hashes =
                LongStream.range(from, from + n).map(BlockExpiryTest::hash).toArray();
        return IndexOp.Store.recovered(tier, false, 0, hashes, hashes.clone());
    }

    private static long hash(long i) {
        return i * 0x9E3779B97F4A7C15L + 1;
    }
}
