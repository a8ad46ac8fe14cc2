package io.kvindexer.indexer.event;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import java.util.stream.IntStream;

/** Test helper: field-by-field checks of decoded events (records holding arrays have identity equality). */
final class EventAssert {

    private EventAssert() {}

    static int[] range(int fromInclusive, int toInclusive) {
        return IntStream.rangeClosed(fromInclusive, toInclusive).toArray();
    }

    static BlockStored stored(KvEvent event) {
        assertThat(event).isInstanceOf(BlockStored.class);
        return (BlockStored) event;
    }

    static BlockRemoved removed(KvEvent event) {
        assertThat(event).isInstanceOf(BlockRemoved.class);
        return (BlockRemoved) event;
    }

    /** Batch A of the wire spec: hashes 111 and 222, no parent, tokens 1..8, block size 4, GPU, no LoRA. */
    static void assertBatchAStored(KvEvent event) {
        assertPlainStored(event, new long[] {111L, 222L}, null, range(1, 8), 4);
    }

    /**
     * A BlockStored on the GPU without LoRA, multimodal hashes or EAGLE: every field checked. A null
     * {@code parentBlockHash} means the event has no parent (and the parent field reads zero).
     */
    static BlockStored assertPlainStored(
            KvEvent event, long[] blockHashes, Long parentBlockHash, int[] tokenIds, int blockSize) {
        BlockStored s = stored(event);
        assertThat(s.blockHashes()).containsExactly(blockHashes);
        assertThat(s.hasParent()).isEqualTo(parentBlockHash != null);
        assertThat(s.parentBlockHash()).isEqualTo(parentBlockHash == null ? 0L : parentBlockHash);
        assertThat(s.tokenIds()).containsExactly(tokenIds);
        assertThat(s.blockSize()).isEqualTo(blockSize);
        assertThat(s.loraName()).isNull();
        assertThat(s.tier()).isEqualTo(StorageTier.DEVICE);
        assertThat(s.mmHashes()).isNull();
        assertThat(s.eagle()).isFalse();
        return s;
    }

    /** Batch B of the wire spec: BlockRemoved([111]) on the GPU. */
    static void assertBatchBRemoved(KvEvent event) {
        BlockRemoved r = removed(event);
        assertThat(r.blockHashes()).containsExactly(111L);
        assertThat(r.tier()).isEqualTo(StorageTier.DEVICE);
    }
}
