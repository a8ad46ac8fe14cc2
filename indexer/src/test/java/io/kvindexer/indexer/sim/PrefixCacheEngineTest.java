package io.kvindexer.indexer.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class PrefixCacheEngineTest {

    private static int[] tokens(int from, int count) {
        return IntStream.range(from, from + count).toArray();
    }

    private static int[] concat(int[] a, int[] b) {
        return IntStream.concat(IntStream.of(a), IntStream.of(b)).toArray();
    }

    @Test
    void firstRequestStoresItsFullBlocksWithoutParent() {
        PrefixCacheEngine engine = new PrefixCacheEngine(10, 4);
        int[] prompt = tokens(1, 10); // two full blocks and a partial one
        PrefixCacheEngine.Served served = engine.serve(prompt);

        assertThat(served.hitBlocks()).isZero();
        assertThat(served.events()).hasSize(1);
        SimEvent.Stored stored = (SimEvent.Stored) served.events().get(0);
        assertThat(stored.hashes()).containsExactly(EngineSimulator.sequenceHashes(prompt, 4, null));
        assertThat(stored.parent()).isNull();
        assertThat(stored.tokens()).containsExactly(tokens(1, 8));
        assertThat(engine.cachedBlocks()).isEqualTo(2);
    }

    @Test
    void sharedPrefixHitsAndTheRestChainsToTheLastHitBlock() {
        PrefixCacheEngine engine = new PrefixCacheEngine(10, 4);
        int[] prefix = tokens(1, 8);
        engine.serve(prefix);
        int[] longer = concat(prefix, tokens(100, 8));
        PrefixCacheEngine.Served served = engine.serve(longer);

        long[] all = EngineSimulator.sequenceHashes(longer, 4, null);
        assertThat(served.hitBlocks()).isEqualTo(2);
        SimEvent.Stored stored = (SimEvent.Stored) served.events().get(0);
        assertThat(stored.parent()).isEqualTo(all[1]);
        assertThat(stored.hashes()).containsExactly(all[2], all[3]);
        assertThat(stored.tokens()).containsExactly(tokens(100, 8));
        assertThat(engine.serve(longer).events())
                .as("a full hit changes nothing")
                .isEmpty();
    }

    @Test
    void evictsLeastRecentlyUsedBlocksBeforeStoring() {
        PrefixCacheEngine engine = new PrefixCacheEngine(4, 4);
        int[] a = tokens(1, 8);
        int[] b = tokens(50, 8);
        int[] c = tokens(90, 8);
        long[] ha = EngineSimulator.sequenceHashes(a, 4, null);
        long[] hb = EngineSimulator.sequenceHashes(b, 4, null);
        engine.serve(a);
        engine.serve(b);
        engine.serve(a); // a is now more recent than b

        PrefixCacheEngine.Served served = engine.serve(c);

        assertThat(served.events()).hasSize(3);
        assertThat(served.events().get(0)).isInstanceOf(SimEvent.Removed.class);
        assertThat(served.events().get(1)).isInstanceOf(SimEvent.Removed.class);
        assertThat(((SimEvent.Removed) served.events().get(0)).hashes()).containsExactly(hb[0]);
        assertThat(((SimEvent.Removed) served.events().get(1)).hashes()).containsExactly(hb[1]);
        assertThat(served.events().get(2)).isInstanceOf(SimEvent.Stored.class);
        assertThat(engine.holds(ha[0])).isTrue();
        assertThat(engine.holds(hb[0])).isFalse();
        assertThat(engine.cachedBlocks()).isEqualTo(4);
    }

    @Test
    void promptLongerThanTheCacheKeepsOnlyItsHead() {
        PrefixCacheEngine engine = new PrefixCacheEngine(3, 2);
        PrefixCacheEngine.Served served = engine.serve(tokens(0, 20));
        assertThat(served.totalBlocks()).isEqualTo(3);
        assertThat(((SimEvent.Stored) served.events().get(0)).hashes()).hasSize(3);
        assertThat(engine.cachedBlocks()).isEqualTo(3);
    }
}
