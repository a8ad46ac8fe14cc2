package io.kvindexer.indexer.recovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.index.IndexOptions;
import io.kvindexer.indexer.index.Indexers;
import io.kvindexer.indexer.index.ModelIndex;
import java.io.ByteArrayInputStream;
import java.time.Duration;
import java.util.List;
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
