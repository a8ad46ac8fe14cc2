package io.kvindexer.indexer.event;

import static io.kvindexer.indexer.event.EventAssert.assertBatchAStored;
import static io.kvindexer.indexer.event.EventAssert.assertBatchBRemoved;
import static io.kvindexer.indexer.event.EventAssert.assertPlainStored;
import static io.kvindexer.indexer.event.EventAssert.range;
import static io.kvindexer.indexer.event.EventAssert.removed;
import static io.kvindexer.indexer.event.GoldenPayloads.*;
import static io.kvindexer.indexer.event.Msgpack.TS;
import static io.kvindexer.indexer.event.Msgpack.hex;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.common.StorageTier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every example payload of GoldenPayloads (compatibility.md, Engine event streams), every field checked. */
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

    /** What a single-batch golden payload must decode to, beyond its envelope. */
    enum Expect {
        BATCH_A_STORED,
        BATCH_B_REMOVED,
        CLEARED,
        NO_EVENTS
    }

    static Stream<Arguments> envelopePayloads() {
        return Stream.of(
                Arguments.of("vllm map stored, minimal", VLLM_MAP_STORED_MIN, 128, 0, Expect.BATCH_A_STORED),
                Arguments.of("vllm map removed, minimal", VLLM_MAP_REMOVED_MIN, 57, 0, Expect.BATCH_B_REMOVED),
                Arguments.of("vllm map cleared", VLLM_MAP_CLEARED, 35, 0, Expect.CLEARED),
                // also carries extra_keys [nil, nil] (→ no multimodal hashes), group_idx and kv_cache_spec_kind
                Arguments.of(
                        "vllm map stored, real, extra keys group and kind",
                        VLLM_MAP_STORED_REAL,
                        187,
                        0,
                        Expect.BATCH_A_STORED),
                Arguments.of(
                        "vllm map removed, real, group zero", VLLM_MAP_REMOVED_REAL, 68, 0, Expect.BATCH_B_REMOVED),
                Arguments.of("vllm 0.2.3 positional stored", VLLM_ARR023_STORED, 50, 0, Expect.BATCH_A_STORED),
                Arguments.of("vllm 0.2.3 positional removed", VLLM_ARR023_REMOVED, 33, 0, Expect.BATCH_B_REMOVED),
                Arguments.of("vllm 0.2.3 positional cleared", VLLM_ARR023_CLEARED, 30, 0, Expect.CLEARED),
                // vLLM 0.9.0: two-element envelope, no rank; no medium at all → device
                Arguments.of("vllm 0.9.0 stored, no rank", VLLM_ARR090_STORED, 40, null, Expect.BATCH_A_STORED),
                Arguments.of("vllm 0.9.0 removed, no rank", VLLM_ARR090_REMOVED, 27, null, Expect.BATCH_B_REMOVED),
                Arguments.of("vllm 0.9.0 cleared, no rank", VLLM_ARR090_CLEARED, 29, null, Expect.CLEARED),
                Arguments.of("sglang positional stored", SGLANG_ARR_STORED, 45, 0, Expect.BATCH_A_STORED),
                Arguments.of("sglang map stored without lora_name", SGLANG_MAP_STORED, 117, 0, Expect.BATCH_A_STORED),
                Arguments.of("nil rank is null", VLLM_MAP_UNRANKED, 35, null, Expect.CLEARED),
                Arguments.of("empty batch heartbeat", VLLM_MAP_EMPTY_BATCH, 12, 0, Expect.NO_EVENTS));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("envelopePayloads")
    void goldenPayloadDecodes(String name, String hex, int bytes, Integer rank, Expect expect) throws Exception {
        KvEventBatch batch = decode(hex, bytes);
        assertBatch(batch, expect == Expect.NO_EVENTS ? 0 : 1, rank);
        switch (expect) {
            case BATCH_A_STORED -> assertBatchAStored(batch.events().get(0));
            case BATCH_B_REMOVED -> assertBatchBRemoved(batch.events().get(0));
            case CLEARED -> assertThat(batch.events()).containsExactly(new AllBlocksCleared());
            case NO_EVENTS -> assertThat(batch.events()).isEmpty();
        }
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
        assertPlainStored(batch.events().get(1), new long[] {333L}, 222L, new int[] {9, 10, 11, 12}, 4);
    }

    @Test
    void behaviourSpecArrayStoredExample() throws Exception {
        KvEventBatch batch = decode(DYNAMO_ARRAY_STORED, 59);
        assertThat(batch.timestamp()).isEqualTo(1700000000.5);
        assertThat(batch.dataParallelRank()).isZero();
        assertThat(batch.events()).hasSize(1);
        BlockStored s = assertPlainStored(
                batch.events().get(0),
                new long[] {Long.parseUnsignedLong("16863443419780771464")},
                null,
                range(1, 16),
                16);
        assertThat(s.blockHashes()[0]).isEqualTo(0xea06fc71a5ee6e88L);
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
