package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.dump.BinaryDumpReader;
import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import it.unimi.dsi.fastutil.HashCommon;
import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The warm-up a replica runs in its recovery delay: a whole, valid dump, staged and never installed. */
class RecoveryWarmUpTest {

    @Test
    void theMadeUpDumpIsWholeAndValid() throws Exception {
        try (Indexers indexers = new Indexers(IndexOptions.defaults())) {
            Recovered r = BinaryDumpApplier.stage(
                    new ByteArrayInputStream(RecoveryWarmUp.dump()), indexers, 10_000, "the test");
            assertThat(r.indexes()).isEqualTo(1);
            r.install().run(); // only this test installs it, to count what it held
            List<ModelIndex> all = indexers.all();
            assertThat(all).hasSize(1);
            assertThat(all.get(0).stats().blocks()).isEqualTo(RecoveryWarmUp.BLOCKS);
            assertThat(all.get(0).stats().memberships()).isEqualTo(RecoveryWarmUp.MEMBERSHIPS);
        }
    }

    /**
     * The shapes that make the warm-up worth its time: each is a branch a peer's dump takes, which the JIT compiles
     * out when the warm-up never took it (a trap and a recompilation on the clock; ADR 0001, "Tenth round — recovery").
     */
    @Test
    void theMadeUpDumpTakesTheBranchesARealOneTakes() throws Exception {
        Shapes shapes = new Shapes();
        BinaryDumpReader.read(new ByteArrayInputStream(RecoveryWarmUp.dump()), shapes);
        assertThat(shapes.blocks).isEqualTo(RecoveryWarmUp.BLOCKS);
        assertThat(shapes.mostOwners)
                .as("an owner set past an owner list (63 codes)")
                .isGreaterThan(63);
        assertThat(shapes.ownerCounts)
                .as("every owner count from a packed word to a bitset")
                .hasSizeGreaterThan(63);
        assertThat(shapes.longestRun)
                .as("a run longer than the prefetch's first scratch (64)")
                .isGreaterThan(64);
        assertThat(shapes.twins)
                .as("two blocks of one content under one parent")
                .isPositive();
        assertThat(shapes.lastHomes)
                .as("block-hash table probes that wrap from the last slot")
                .isGreaterThan(1);
        assertThat(shapes.blocks)
                .as("more node pages (2,048 nodes each) than a store's first page slots")
                .isGreaterThan(2 * 2048 * 2);
    }

    /** What {@link #theMadeUpDumpTakesTheBranchesARealOneTakes} looks for, counted as the dump is read. */
    private static final class Shapes implements BinaryDumpReader.Visitor {
        int blocks;
        int mostOwners;
        final Set<Integer> ownerCounts = new HashSet<>();
        int longestRun;
        int twins;
        int lastHomes;
        private int owners;
        private int run;
        private long lastBlock;
        private final Map<String, Long> byParentAndLocal = new HashMap<>();

        @Override
        public void block(boolean hasParent, long parentBlockHash, long blockHash, long localHash) {
            endBlock();
            blocks++;
            run = hasParent && parentBlockHash == lastBlock ? run + 1 : 1;
            longestRun = Math.max(longestRun, run);
            lastBlock = blockHash;
            Long other = byParentAndLocal.put(parentBlockHash + "/" + localHash, blockHash);
            if (hasParent && other != null && other != blockHash) {
                twins++;
            }
            if (HashCommon.mix(blockHash) >>> 32 == 0xFFFF_FFFFL) {
                lastHomes++;
            }
        }

        @Override
        public void owner(int workerRef, StorageTier tier) {
            owners++;
        }

        private void endBlock() {
            if (owners > 0) {
                ownerCounts.add(owners);
                mostOwners = Math.max(mostOwners, owners);
            }
            owners = 0;
        }

        @Override
        public void indexEnd() {
            endBlock();
        }
    }

    @Test
    void aRecoveryDelayWarmsUpAndLeavesNothingBehind() throws Exception {
        try (BrokenPeer peer = BrokenPeer.start("{}"); // a JSON-only peer with nothing to recover
                Indexers indexers = new Indexers(IndexOptions.defaults())) {
            long start = System.nanoTime();
            PeerRecovery.Result result = new PeerRecovery(
                            List.of(peer.url()), indexers, Duration.ofMillis(800), Duration.ofSeconds(10))
                    .run();
            assertThat(result).isEqualTo(PeerRecovery.Result.SUCCEEDED);
            assertThat(Duration.ofNanos(peer.firstRequestNanos() - start))
                    .isGreaterThanOrEqualTo(Duration.ofMillis(800));
            assertThat(indexers.all())
                    .as("the warm-up's staged indexes are never installed")
                    .isEmpty();
        }
    }

    @Test
    void noDelayNoWarmUp() throws Exception {
        try (Indexers indexers = new Indexers(IndexOptions.defaults())) {
            long t0 = System.nanoTime();
            RecoveryWarmUp.run(indexers, System.nanoTime());
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(100));
            assertThat(indexers.all()).isEmpty();
        }
    }
}
