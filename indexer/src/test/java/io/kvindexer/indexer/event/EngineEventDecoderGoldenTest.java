package io.kvindexer.indexer.event;

import io.kvindexer.indexer.model.StorageTier;

import org.junit.jupiter.api.Test;

import static io.kvindexer.indexer.event.EventAssert.assertBatchAStored;
import static io.kvindexer.indexer.event.EventAssert.assertBatchBRemoved;
import static io.kvindexer.indexer.event.EventAssert.range;
import static io.kvindexer.indexer.event.EventAssert.removed;
import static io.kvindexer.indexer.event.EventAssert.stored;
import static io.kvindexer.indexer.event.GoldenPayloads.*;
import static io.kvindexer.indexer.event.Msgpack.TS;
import static io.kvindexer.indexer.event.Msgpack.hex;
import static org.assertj.core.api.Assertions.assertThat;

/** Every example payload of the wire spec (Appendix A) and the behaviour spec (§2.3), every field checked. */
class EngineEventDecoderGoldenTest {

    private final EngineEventDecoder decoder = new EngineEventDecoder();

    private KvEventBatch decode(String hex, int expectedBytes) throws EventDecodeException {
        byte[] payload = hex(hex);
        assertThat(payload).as("golden payload length").hasSize(expectedBytes);
        return decoder.decode(payload);
    }

    private static void assertBatch(KvEventBatch batch, int events, Integer rank) {
        assertThat(batch.timestamp()).isEqualTo(TS);
        assertThat(batch.events()).hasSize(events);
        assertThat(batch.dataParallelRank()).isEqualTo(rank);
        assertThat(batch.unknownEvents()).isZero();
        assertThat(batch.ignoredEvents()).isZero();
    }

    @Test
    void vllmMapStoredMin() throws Exception {
        KvEventBatch batch = decode(VLLM_MAP_STORED_MIN, 128);
        assertBatch(batch, 1, 0);
        assertBatchAStored(batch.events().get(0));
    }

    @Test
    void vllmMapRemovedMin() throws Exception {
        KvEventBatch batch = decode(VLLM_MAP_REMOVED_MIN, 57);
        assertBatch(batch, 1, 0);
        assertBatchBRemoved(batch.events().get(0));
    }

    @Test
    void vllmMapCleared() throws Exception {
        KvEventBatch batch = decode(VLLM_MAP_CLEARED, 35);
        assertBatch(batch, 1, 0);
        assertThat(batch.events().get(0)).isEqualTo(new AllBlocksCleared());
    }

    @Test
    void vllmMapStoredRealWithExtraKeysGroupAndKind() throws Exception {
        KvEventBatch batch = decode(VLLM_MAP_STORED_REAL, 187);
        assertBatch(batch, 1, 0);
        assertBatchAStored(batch.events().get(0)); // extra_keys [nil, nil] → no multimodal hashes
    }

    @Test
    void vllmMapRemovedRealWithGroupZero() throws Exception {
        KvEventBatch batch = decode(VLLM_MAP_REMOVED_REAL, 68);
        assertBatch(batch, 1, 0);
        assertBatchBRemoved(batch.events().get(0));
    }

    @Test
    void vllm023PositionalStored() throws Exception {
        KvEventBatch batch = decode(VLLM_ARR023_STORED, 50);
        assertBatch(batch, 1, 0);
        assertBatchAStored(batch.events().get(0));
    }

    @Test
    void vllm023PositionalRemoved() throws Exception {
        KvEventBatch batch = decode(VLLM_ARR023_REMOVED, 33);
        assertBatch(batch, 1, 0);
        assertBatchBRemoved(batch.events().get(0));
    }

    @Test
    void vllm023PositionalCleared() throws Exception {
        KvEventBatch batch = decode(VLLM_ARR023_CLEARED, 30);
        assertBatch(batch, 1, 0);
        assertThat(batch.events()).containsExactly(new AllBlocksCleared());
    }

    @Test
    void vllm090TwoElementEnvelopeHasNoRank() throws Exception {
        KvEventBatch stored = decode(VLLM_ARR090_STORED, 40);
        assertBatch(stored, 1, null);
        assertBatchAStored(stored.events().get(0)); // no medium at all → device

        KvEventBatch removed = decode(VLLM_ARR090_REMOVED, 27);
        assertBatch(removed, 1, null);
        assertBatchBRemoved(removed.events().get(0));

        KvEventBatch cleared = decode(VLLM_ARR090_CLEARED, 29);
        assertBatch(cleared, 1, null);
        assertThat(cleared.events()).containsExactly(new AllBlocksCleared());
    }

    @Test
    void sglangPositionalStored() throws Exception {
        KvEventBatch batch = decode(SGLANG_ARR_STORED, 45);
        assertBatch(batch, 1, 0);
        assertBatchAStored(batch.events().get(0));
    }

    @Test
    void sglangMapStoredWithoutLoraName() throws Exception {
        KvEventBatch batch = decode(SGLANG_MAP_STORED, 117);
        assertBatch(batch, 1, 0);
        assertBatchAStored(batch.events().get(0));
    }

    @Test
    void uint64HashesAboveLongMaxKeepTheirBitPattern() throws Exception {
        KvEventBatch batch = decode(VLLM_MAP_REMOVED_U64, 74);
        assertBatch(batch, 1, 0);
        BlockRemoved r = removed(batch.events().get(0));
        assertThat(r.blockHashes()).containsExactly(-1L, 0x8000_0000_0000_0001L);
        assertThat(Long.toUnsignedString(r.blockHashes()[0])).isEqualTo("18446744073709551615");
        assertThat(Long.toUnsignedString(r.blockHashes()[1])).isEqualTo("9223372036854775809");
        assertThat(r.tier()).isEqualTo(StorageTier.DEVICE);
    }

    @Test
    void binDigestHashUsesItsLastEightBytesBigEndian() throws Exception {
        KvEventBatch batch = decode(VLLM_MAP_REMOVED_BYTES, 90);
        assertBatch(batch, 1, 0);
        assertThat(removed(batch.events().get(0)).blockHashes()).containsExactly(0x18191a1b1c1d1e1fL);
    }

    @Test
    void sglangNegativeHashIsTwosComplement() throws Exception {
        KvEventBatch batch = decode(SGLANG_ARR_REMOVED_NEG, 32);
        assertBatch(batch, 1, 0);
        BlockRemoved r = removed(batch.events().get(0));
        assertThat(r.blockHashes()).containsExactly(-2L);
        assertThat(Long.toUnsignedString(r.blockHashes()[0])).isEqualTo("18446744073709551614");
        assertThat(r.tier()).isEqualTo(StorageTier.DEVICE);
    }

    @Test
    void nilRankIsNull() throws Exception {
        KvEventBatch batch = decode(VLLM_MAP_UNRANKED, 35);
        assertBatch(batch, 1, null);
        assertThat(batch.events()).containsExactly(new AllBlocksCleared());
    }

    @Test
    void emptyBatchHeartbeat() throws Exception {
        KvEventBatch batch = decode(VLLM_MAP_EMPTY_BATCH, 12);
        assertBatch(batch, 0, 0);
    }

    @Test
    void twoEventsInOneStepRankOne() throws Exception {
        KvEventBatch batch = decode(VLLM_MAP_TWO_EVENTS_RANK1, 205);
        assertBatch(batch, 2, 1);
        assertBatchBRemoved(batch.events().get(0));
        BlockStored s = stored(batch.events().get(1));
        assertThat(s.blockHashes()).containsExactly(333L);
        assertThat(s.hasParent()).isTrue();
        assertThat(s.parentBlockHash()).isEqualTo(222L);
        assertThat(s.tokenIds()).containsExactly(9, 10, 11, 12);
        assertThat(s.blockSize()).isEqualTo(4);
        assertThat(s.loraName()).isNull();
        assertThat(s.tier()).isEqualTo(StorageTier.DEVICE);
        assertThat(s.mmHashes()).isNull();
        assertThat(s.eagle()).isFalse();
    }

    @Test
    void behaviourSpecArrayStoredExample() throws Exception {
        KvEventBatch batch = decode(DYNAMO_ARRAY_STORED, 59);
        assertThat(batch.timestamp()).isEqualTo(1700000000.5);
        assertThat(batch.dataParallelRank()).isZero();
        assertThat(batch.events()).hasSize(1);
        BlockStored s = stored(batch.events().get(0));
        assertThat(s.blockHashes()).containsExactly(Long.parseUnsignedLong("16863443419780771464"));
        assertThat(s.blockHashes()[0]).isEqualTo(0xea06fc71a5ee6e88L);
        assertThat(s.hasParent()).isFalse();
        assertThat(s.tokenIds()).containsExactly(range(1, 16));
        assertThat(s.blockSize()).isEqualTo(16);
        assertThat(s.loraName()).isNull();
        assertThat(s.tier()).isEqualTo(StorageTier.DEVICE);
        assertThat(s.mmHashes()).isNull();
        assertThat(s.eagle()).isFalse();
    }

    @Test
    void behaviourSpecRemovedAndClearedExample() throws Exception {
        KvEventBatch batch = decoder.decode(hex(DYNAMO_REMOVED_CLEARED));
        assertThat(batch.timestamp()).isEqualTo(1700000001.0);
        assertThat(batch.dataParallelRank()).isNull();
        assertThat(batch.events()).hasSize(2);
        BlockRemoved r = removed(batch.events().get(0));
        assertThat(r.blockHashes()).containsExactly(0xea06fc71a5ee6e88L);
        assertThat(r.tier()).isEqualTo(StorageTier.DEVICE); // medium nil
        assertThat(batch.events().get(1)).isEqualTo(new AllBlocksCleared());
    }

    @Test
    void everyGoldenPayloadDecodes() throws Exception {
        for (var golden : ALL.entrySet()) {
            KvEventBatch batch = decoder.decode(hex(golden.getValue()));
            assertThat(batch.unknownEvents()).as(golden.getKey()).isZero();
            assertThat(batch.ignoredEvents()).as(golden.getKey()).isZero();
        }
    }
}
