package io.kvindexer.indexer.hash;

import static org.assertj.core.api.Assertions.assertThat;

import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Test vectors V0–V10 (compatibility.md, Hashing) plus the block-splitting and multimodal rules. */
class BlockHasherTest {

    private static int[] range(int fromInclusive, int toInclusive) {
        return IntStream.rangeClosed(fromInclusive, toInclusive).toArray();
    }

    private static long u64(String unsignedDecimal) {
        return Long.parseUnsignedLong(unsignedDecimal);
    }

    @Test
    void v0SanityAnchorTestData() {
        long h = BlockHasher.xxh3("test data".getBytes(StandardCharsets.US_ASCII), BlockHasher.BASE_SEED);
        assertThat(Long.toUnsignedString(h)).isEqualTo("13226331709069118873");
    }

    @Test
    void v1FirstBlockOfSixteenTokens() {
        long[] hashes = BlockHasher.localHashes(range(1, 16), 16, BlockHasher.seed(null));
        assertThat(hashes).containsExactly(u64("16863443419780771464"));
        assertThat(hashes[0]).isEqualTo(-1583300653928780152L);
    }

    @Test
    void v2HashesAreIndependentPerBlock() {
        long[] hashes = BlockHasher.localHashes(range(1, 32), 16, BlockHasher.BASE_SEED);
        assertThat(hashes).containsExactly(u64("16863443419780771464"), u64("2287610619914608821"));
        // block 2 alone gives the same hash as block 2 of the longer sequence: no chaining
        assertThat(BlockHasher.localHashes(range(17, 32), 16, BlockHasher.BASE_SEED))
                .containsExactly(u64("2287610619914608821"));
    }

    @Test
    void v3SequenceHashOfSecondBlock() {
        long[] local = BlockHasher.localHashes(range(1, 32), 16, BlockHasher.BASE_SEED);
        long[] seq = SequenceHasher.sequenceHashes(local);
        assertThat(seq[0]).isEqualTo(local[0]);
        assertThat(Long.toUnsignedString(seq[1])).isEqualTo("12466389667045779788");
        assertThat(SequenceHasher.next(u64("16863443419780771464"), u64("2287610619914608821")))
                .isEqualTo(u64("12466389667045779788"));
    }

    @Test
    void sequenceHashesOfEmptyInputIsEmpty() {
        assertThat(SequenceHasher.sequenceHashes(new long[0])).isEmpty();
    }

    @Test
    void v4PartialBlockIsDropped() {
        assertThat(BlockHasher.localHashes(range(1, 20), 16, BlockHasher.BASE_SEED))
                .containsExactly(u64("16863443419780771464"));
        assertThat(BlockHasher.localHashes(range(1, 15), 16, BlockHasher.BASE_SEED))
                .isEmpty();
    }

    @Test
    void v5AndV6SmallBlocks() {
        assertThat(BlockHasher.localHashes(new int[] {1, 2, 3, 4}, 4, BlockHasher.BASE_SEED))
                .containsExactly(u64("14643705804678351452"));
        assertThat(BlockHasher.localHashes(new int[] {0, 1, 2, 3}, 4, BlockHasher.BASE_SEED))
                .containsExactly(u64("9143094415614847814"));
    }

    @Test
    void v7LoraNameChangesTheSeed() {
        long seed = BlockHasher.seed("my-adapter");
        assertThat(Long.toUnsignedString(seed)).isEqualTo("2360313164392603308");
        assertThat(BlockHasher.localHashes(range(1, 16), 16, seed)).containsExactly(u64("16700703466399747636"));
    }

    /** An adapter named by vLLM's lora_id alone (values from Debian's python3-xxhash). */
    @Test
    void unnamedAdapterSeedIsItsOwn() {
        assertThat(Long.toUnsignedString(BlockHasher.unnamedAdapterSeed(1))).isEqualTo("4678170435044340298");
        assertThat(Long.toUnsignedString(BlockHasher.unnamedAdapterSeed(2))).isEqualTo("10728222837129329323");
        assertThat(BlockHasher.unnamedAdapterSeed(1)).isNotEqualTo(BlockHasher.seed("1"));
    }

    @Test
    void v8EmptyLoraNameIsTheBaseModel() {
        assertThat(BlockHasher.seed("")).isEqualTo(BlockHasher.BASE_SEED);
        assertThat(BlockHasher.seed(null)).isEqualTo(BlockHasher.BASE_SEED);
        assertThat(BlockHasher.localHashes(range(1, 16), 16, BlockHasher.seed("")))
                .containsExactly(u64("16863443419780771464"));
    }

    @Test
    void v9CacheSaltMixedOnlyWhenAsked() {
        long seed = BlockHasher.seed(null, "tenant-a", true);
        assertThat(Long.toUnsignedString(seed)).isEqualTo("1948188790972764086");
        assertThat(BlockHasher.localHashes(range(1, 16), 16, seed)).containsExactly(u64("8175209796170318505"));
        // G2: the salt is accepted and ignored
        assertThat(BlockHasher.seed(null, "tenant-a", false)).isEqualTo(BlockHasher.BASE_SEED);
        assertThat(BlockHasher.seed(null, "", true)).isEqualTo(BlockHasher.BASE_SEED);
    }

    @Test
    void v10LoraAndSalt() {
        long seed = BlockHasher.seed("my-adapter", "tenant-a", true);
        assertThat(Long.toUnsignedString(seed)).isEqualTo("4308501955365366057");
        assertThat(BlockHasher.localHashes(range(1, 16), 16, seed)).containsExactly(u64("3742962498298153757"));
    }

    @Test
    void blockSizeZeroOrNegativeGivesNoHashes() {
        assertThat(BlockHasher.localHashes(range(1, 16), 0, BlockHasher.BASE_SEED))
                .isEmpty();
        assertThat(BlockHasher.localHashes(range(1, 16), -4, BlockHasher.BASE_SEED))
                .isEmpty();
        assertThat(BlockHasher.localHashes(new int[0], 16, BlockHasher.BASE_SEED))
                .isEmpty();
    }

    @Test
    void blockCountsForSeveralBlockSizesDropTheTail() {
        // Dynamo's test_compute_block_hash_for_seq: 11, 32, 64 over a 100-token sequence
        int[] tokens = range(0, 99);
        for (int bs : new int[] {11, 32, 64}) {
            long[] hashes = BlockHasher.localHashes(tokens, bs, BlockHasher.BASE_SEED);
            assertThat(hashes).hasSize(100 / bs);
            for (int b = 0; b < hashes.length; b++) {
                assertThat(hashes[b]).isEqualTo(BlockHasher.hashBlock(tokens, b * bs, bs, BlockHasher.BASE_SEED, null));
            }
        }
    }

    /** Tokens still in a request's bytes (a msgpack bin: little-endian u32 after other bytes) hash as the ints do. */
    @Test
    void aViewOfLittleEndianBytesHashesAsTheArray() {
        int[] tokens = new java.util.SplittableRandom(23).ints(12_345).toArray();
        ByteBuffer body = ByteBuffer.allocate(7 + tokens.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        body.position(7);
        body.asIntBuffer().put(tokens);
        java.nio.IntBuffer view = body.slice().order(ByteOrder.LITTLE_ENDIAN).asIntBuffer();
        for (int bs : new int[] {1, 16, 128, 5_000}) {
            for (boolean eagle : new boolean[] {false, true}) {
                long[] fromView = BlockHasher.localHashes(view.position(3), bs, eagle, BlockHasher.BASE_SEED);
                assertThat(fromView)
                        .as("block size %d, eagle %s", bs, eagle)
                        .containsExactly(BlockHasher.localHashes(
                                java.util.Arrays.copyOfRange(tokens, 3, tokens.length),
                                bs,
                                eagle,
                                BlockHasher.BASE_SEED));
            }
        }
    }

    /** Dynamo's test_compute_block_hash_for_seq_eagle_windows: B + 1 tokens per block, advancing by B. */
    @Test
    void eagleWindowsHashOneTokenMoreAndAdvanceByTheBlockSize() {
        int[] tokens = range(0, 5);
        assertThat(BlockHasher.localHashes(tokens, 2, BlockHasher.BASE_SEED)).hasSize(3);
        assertThat(BlockHasher.localHashes(tokens, 2, true, BlockHasher.BASE_SEED))
                .containsExactly(
                        BlockHasher.localHashes(new int[] {0, 1, 2}, 2, true, BlockHasher.BASE_SEED)[0],
                        BlockHasher.localHashes(new int[] {2, 3, 4}, 2, true, BlockHasher.BASE_SEED)[0])
                .containsExactly(
                        BlockHasher.hashBlock(tokens, 0, 3, BlockHasher.BASE_SEED, null),
                        BlockHasher.hashBlock(tokens, 2, 3, BlockHasher.BASE_SEED, null));
    }

    /** n tokens hold floor(n / B) plain blocks and floor((n - 1) / B) EAGLE ones; none without a block size. */
    @Test
    void eagleBlockCountsLeaveRoomForTheLastWindowsExtraToken() {
        for (int bs : new int[] {1, 2, 16}) {
            for (int n = 0; n <= 3 * bs + 2; n++) {
                assertThat(BlockHasher.blocks(n, bs, false))
                        .as("n %d, B %d", n, bs)
                        .isEqualTo(n / bs);
                assertThat(BlockHasher.blocks(n, bs, true))
                        .as("n %d, B %d", n, bs)
                        .isEqualTo(Math.max(0, n - 1) / bs);
                assertThat(BlockHasher.localHashes(range(1, n), bs, true, BlockHasher.BASE_SEED))
                        .hasSize(Math.max(0, n - 1) / bs);
            }
        }
        assertThat(BlockHasher.blocks(10, 0, true)).isZero();
        assertThat(BlockHasher.blocks(Integer.MAX_VALUE, Integer.MAX_VALUE, true))
                .as("the window's extra token does not overflow")
                .isZero();
        assertThat(BlockHasher.window(Integer.MAX_VALUE, true)).isEqualTo(1L << 31);
    }

    /**
     * Long prompts are converted in chunks of blocks: every block, across chunk edges, hashes as it does alone; an
     * EAGLE window's extra token, the next chunk's first, too.
     */
    @Test
    void longPromptsHashEveryBlockAsItsOwnBytes() {
        int[] tokens = new java.util.SplittableRandom(19).ints(40_000).toArray();
        for (int bs : new int[] {1, 16, 64, 100, 5_000}) {
            for (boolean eagle : new boolean[] {false, true}) {
                long[] hashes = BlockHasher.localHashes(tokens, bs, eagle, BlockHasher.seed("lora"));
                int window = eagle ? bs + 1 : bs;
                assertThat(hashes).hasSize((tokens.length - window + bs) / bs);
                for (int b = 0; b < hashes.length; b++) {
                    assertThat(hashes[b])
                            .as("block %d of size %d, eagle %s", b, bs, eagle)
                            .isEqualTo(BlockHasher.hashBlock(tokens, b * bs, window, BlockHasher.seed("lora"), null));
                }
            }
        }
    }

    @Test
    void tokensAreUnsignedLittleEndianU32() {
        int[] tokens = {0xFFFFFFFF, 0x01020304};
        byte[] bytes = {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0x04, 0x03, 0x02, 0x01};
        assertThat(BlockHasher.localHashes(tokens, 2, BlockHasher.BASE_SEED))
                .containsExactly(Hashing.xxh3_64(BlockHasher.BASE_SEED).hashBytesToLong(bytes));
    }

    @Test
    void multimodalHashesAreAppendedSortedAsUnsignedLittleEndian() {
        int[] tokens = {1, 2, 3, 4};
        long big = 0x8000_0000_0000_0005L; // above 2^63: negative as signed, largest as unsigned
        long small = 7L;
        long mid = 0x0123_4567_89ab_cdefL;
        long seed = BlockHasher.seed("my-adapter");

        ByteBuffer expected = ByteBuffer.allocate(4 * 4 + 3 * 8).order(ByteOrder.LITTLE_ENDIAN);
        for (int t : tokens) {
            expected.putInt(t);
        }
        expected.putLong(small).putLong(mid).putLong(big); // ascending unsigned
        long byHand = Hashing.xxh3_64(seed).hashBytesToLong(expected.array());

        long[] unsorted = {big, small, mid};
        assertThat(BlockHasher.hashBlock(tokens, 0, 4, seed, unsorted)).isEqualTo(byHand);
        assertThat(BlockHasher.hashBlock(tokens, 0, 4, seed, new long[] {mid, big, small}))
                .isEqualTo(byHand);
        assertThat(unsorted).containsExactly(big, small, mid); // the caller's array is left alone
        // multimodal info changes the hash; an empty list does not
        assertThat(byHand).isNotEqualTo(BlockHasher.hashBlock(tokens, 0, 4, seed, null));
        assertThat(BlockHasher.hashBlock(tokens, 0, 4, seed, new long[0]))
                .isEqualTo(BlockHasher.hashBlock(tokens, 0, 4, seed, null));
    }

    @Test
    void hashBlockAtOffsetEqualsLocalHashOfThatBlock() {
        int[] tokens = range(1, 32);
        assertThat(BlockHasher.hashBlock(tokens, 16, 16, BlockHasher.BASE_SEED, null))
                .isEqualTo(u64("2287610619914608821"));
    }

    @Test
    void loraNameProducesDifferentHash() {
        int[] tokens = range(1, 16);
        assertThat(BlockHasher.localHashes(tokens, 16, BlockHasher.seed("a")))
                .doesNotContain(BlockHasher.localHashes(tokens, 16, BlockHasher.seed("b"))[0])
                .doesNotContain(u64("16863443419780771464"));
    }
}
