package io.kvindexer.indexer.index;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.event.BlockStored;
import io.kvindexer.indexer.hash.BlockHasher;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * An engine's stores hash the windows a query of the same tokens hashes ({@link BlockHasher#localHashes}): plain
 * blocks and SGLang's EAGLE ones, whose flattened bigrams hold one token more than the blocks.
 */
class StoredChainConverterTest {

    private static BlockStored stored(int blocks, int[] tokens, int blockSize, String lora, boolean eagle) {
        long[] hashes = LongStream.rangeClosed(1, blocks).map(h -> 1000 + h).toArray();
        return new BlockStored(hashes, false, 0, tokens, blockSize, lora, StorageTier.DEVICE, null, eagle);
    }

    @Test
    void storesHashTheWindowsAQueryHashes() {
        SplittableRandom r = new SplittableRandom(42);
        for (int bs : new int[] {1, 3, 16}) {
            for (int blocks = 1; blocks <= 5; blocks++) {
                for (boolean eagle : new boolean[] {false, true}) {
                    int[] tokens =
                            r.ints(blocks * bs + (eagle ? 1 : 0), 0, 1 << 20).toArray();
                    IndexOp.Store op = StoredChainConverter.convert(stored(blocks, tokens, bs, "lora", eagle), bs);
                    assertThat(op.conversionStatus()).isEqualTo(ApplyStatus.OK);
                    assertThat(op.localHashes())
                            .as("B %d, %d blocks, eagle %s", bs, blocks, eagle)
                            .containsExactly(BlockHasher.localHashes(tokens, bs, eagle, BlockHasher.seed("lora")));
                }
            }
        }
    }

    /** An EAGLE store without its last window's extra token hashes the blocks it can, as a query would. */
    @Test
    void anEagleStoreShortOfItsExtraTokenHashesTheBlocksItHolds() {
        int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8};
        IndexOp.Store op = StoredChainConverter.convert(stored(2, tokens, 4, null, true), 4);
        assertThat(op.conversionStatus()).isEqualTo(ApplyStatus.INVALID_BLOCK);
        assertThat(op.localHashes())
                .containsExactly(BlockHasher.localHashes(tokens, 4, true, BlockHasher.BASE_SEED))
                .containsExactly(BlockHasher.hashBlock(Arrays.copyOf(tokens, 5), 0, 5, BlockHasher.BASE_SEED, null));
    }
}
