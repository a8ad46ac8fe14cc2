package io.kvindexer.indexer.event;

import static io.kvindexer.indexer.event.EventAssert.assertBatchAStored;
import static io.kvindexer.indexer.event.EventAssert.assertBatchBRemoved;
import static io.kvindexer.indexer.event.EventAssert.removed;
import static io.kvindexer.indexer.event.EventAssert.stored;
import static io.kvindexer.indexer.event.Msgpack.TS;
import static io.kvindexer.indexer.event.Msgpack.batch;
import static io.kvindexer.indexer.event.Msgpack.hex;
import static io.kvindexer.indexer.event.Msgpack.ints;
import static io.kvindexer.indexer.event.Msgpack.list;
import static io.kvindexer.indexer.event.Msgpack.map;
import static io.kvindexer.indexer.event.Msgpack.mapRemoved;
import static io.kvindexer.indexer.event.Msgpack.pack;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.dynatrace.hash4j.hashing.Hashing;
import io.kvindexer.indexer.common.StorageTier;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/** Edge cases of the engine event decoder, beyond the golden payloads. */
class EngineEventDecoderTest {

    private final EngineEventDecoder decoder = new EngineEventDecoder();

    private KvEventBatch decode(byte[] payload) throws EventDecodeException {
        return decoder.decode(payload);
    }

    private static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    private void assertFails(byte[] payload, String kind, String... messageParts) {
        assertThatThrownBy(() -> decoder.decode(payload)).isInstanceOfSatisfying(EventDecodeException.class, e -> {
            assertThat(e.kind()).as(e.getMessage()).isEqualTo(kind);
            assertThat(e.getMessage()).isNotBlank();
            for (String part : messageParts) {
                assertThat(e.getMessage()).contains(part);
            }
        });
    }

    /** A map BlockStored of block 1 holding tokens 1..4, with one more field. */
    private static Map<String, Object> storedBlockOne(String key, Object value) {
        return map(
                "type", "BlockStored", "block_hashes", list(1L), "token_ids", ints(1, 4), "block_size", 4L, key, value);
    }

    /** vLLM ≤ 0.23 positional BlockStored with all 12 fields. */
    private static List<Object> arrayStored(
            Object hashes,
            Object parent,
            Object tokens,
            Object blockSize,
            Object medium,
            Object loraName,
            Object extraKeys,
            Object groupIdx,
            Object kind,
            Object window) {
        return list(
                "BlockStored",
                hashes,
                parent,
                tokens,
                blockSize,
                null,
                medium,
                loraName,
                extraKeys,
                groupIdx,
                kind,
                window);
    }

    /** Current vLLM map BlockStored with the always-present keys. */
    private static java.util.Map<String, Object> mapStored(
            Object hashes, Object parent, Object tokens, Object blockSize) {
        return map(
                "type",
                "BlockStored",
                "block_hashes",
                hashes,
                "parent_block_hash",
                parent,
                "token_ids",
                tokens,
                "block_size",
                blockSize,
                "lora_id",
                null,
                "medium",
                "GPU",
                "lora_name",
                null);
    }

    @Nested
    class Envelope {

        @Test
        void emptyAndNullPayloadsAreErrors() {
            assertFails(new byte[0], "empty_payload");
            assertFails(null, "empty_payload");
        }

        @Test
        void notAnArray() {
            assertFails(pack(map("ts", 1.0)), "bad_envelope", "envelope", "expected an array");
            assertFails(pack(42L), "bad_envelope");
        }

        @Test
        void oneElementEnvelopeIsAnError() {
            assertFails(pack(list(TS)), "bad_envelope", "at least 2");
        }

        @Test
        void timestampMayBeFloat32OrInteger() throws Exception {
            assertThat(decode(pack(list(1.5f, list(), 0L))).timestamp()).isEqualTo(1.5);
            assertThat(decode(pack(list(1757500000L, list(), 0L))).timestamp()).isEqualTo(1757500000.0);
            assertThat(decode(pack(list(new BigInteger("18446744073709551615"), list(), 0L)))
                            .timestamp())
                    .isEqualTo(1.8446744073709552E19);
        }

        @Test
        void timestampOfAnotherTypeIsAnError() {
            assertFails(pack(list("now", list(), 0L)), "bad_envelope", "ts");
            assertFails(pack(list(null, list(), 0L)), "bad_envelope", "ts");
        }

        @Test
        void eventsMustBeAnArray() {
            assertFails(pack(list(TS, map(), 0L)), "bad_envelope", "events");
        }

        @Test
        void rankIntNilOrAbsent() throws Exception {
            assertThat(decode(batch(3L)).dataParallelRank()).isEqualTo(3);
            assertThat(decode(batch(null)).dataParallelRank()).isNull();
            assertThat(decode(pack(list(TS, list()))).dataParallelRank()).isNull();
            // a u32 above 2^31 keeps its 32-bit pattern; a negative i32 stays itself
            assertThat(decode(batch(0xFFFF_FFFEL)).dataParallelRank()).isEqualTo(-2);
            assertThat(decode(batch(-1L)).dataParallelRank()).isEqualTo(-1);
        }

        @Test
        void rankOfAnotherTypeOrOutOfRangeIsAnError() {
            assertFails(batch("0"), "bad_envelope", "data_parallel_rank");
            assertFails(batch(1L << 32), "bad_envelope", "data_parallel_rank");
            assertFails(batch(new BigInteger("18446744073709551615")), "bad_envelope", "data_parallel_rank");
        }

        @Test
        void extraEnvelopeElementsAreIgnored() throws Exception {
            KvEventBatch b = decode(pack(list(TS, list(list("AllBlocksCleared")), 2L, "future", map("x", 1L))));
            assertThat(b.events()).containsExactly(new AllBlocksCleared());
            assertThat(b.dataParallelRank()).isEqualTo(2);
        }

        @Test
        void trailingBytesAfterTheEnvelopeAreAnError() {
            byte[] golden = hex(GoldenPayloads.VLLM_MAP_CLEARED);
            byte[] withTrailer = java.util.Arrays.copyOf(golden, golden.length + 1);
            assertFails(withTrailer, "bad_envelope", "trailing");
        }

        @Test
        void notMsgpackAtAll() {
            assertFails(new byte[] {(byte) 0xc1}, "not_msgpack");
            assertFails(new byte[] {(byte) 0x92, (byte) 0xc1, (byte) 0x90}, "not_msgpack");
        }
    }

    @Nested
    class Shapes {

        @Test
        void mapAndArrayEventsMixedInOneBatch() throws Exception {
            byte[] payload = batch(
                    0L,
                    arrayStored(list(111L, 222L), null, ints(1, 8), 4L, "GPU", null, null, null, null, null),
                    mapRemoved(list(111L), "medium", "GPU"),
                    list("AllBlocksCleared"),
                    mapStored(list(111L, 222L), null, ints(1, 8), 4L));
            KvEventBatch b = decode(payload);
            assertThat(b.events()).hasSize(4);
            assertBatchAStored(b.events().get(0));
            assertBatchBRemoved(b.events().get(1));
            assertThat(b.events().get(2)).isEqualTo(new AllBlocksCleared());
            assertBatchAStored(b.events().get(3));
        }

        @Test
        void mapKeysInAnyOrderWithUnknownKeys() throws Exception {
            byte[] payload = batch(
                    0L,
                    map(
                            "session_id",
                            "req-1",
                            "lora_name",
                            null,
                            "medium",
                            "GPU",
                            "block_size",
                            4L,
                            "token_ids",
                            ints(1, 8),
                            "locality",
                            "LOCAL",
                            "block_mm_infos",
                            list(null, list(map("a", 1L))),
                            "parent_block_hash",
                            null,
                            "ownership",
                            null,
                            "block_hashes",
                            list(111L, 222L),
                            "kv_cache_spec_sliding_window",
                            4096L,
                            "origin",
                            "NEW",
                            "type",
                            "BlockStored"));
            KvEventBatch b = decode(payload);
            assertThat(b.events()).hasSize(1);
            assertBatchAStored(b.events().get(0));
        }

        @Test
        void map16HeaderIsAccepted() throws Exception {
            // de 00 03 = map16 with 3 entries
            byte[] event = pack(mapRemoved(list(111L), "medium", "GPU"));
            byte[] map16 = new byte[event.length + 2];
            map16[0] = (byte) 0xde;
            map16[1] = 0;
            map16[2] = 3;
            System.arraycopy(event, 1, map16, 3, event.length - 1);
            byte[] prefix = hex("93cb41da30549810000091");
            byte[] payload = new byte[prefix.length + map16.length + 1];
            System.arraycopy(prefix, 0, payload, 0, prefix.length);
            System.arraycopy(map16, 0, payload, prefix.length, map16.length);
            KvEventBatch b = decode(payload);
            assertBatchBRemoved(b.events().get(0));
            assertThat(b.dataParallelRank()).isZero();
        }

        @Test
        void allBlocksClearedWithExtraContentIsStillCleared() throws Exception {
            KvEventBatch b = decode(batch(
                    0L,
                    list("AllBlocksCleared", 1L, "x", list()),
                    map("medium", "GPU", "type", "AllBlocksCleared", "extra", map())));
            assertThat(b.events()).containsExactly(new AllBlocksCleared(), new AllBlocksCleared());
        }

        @Test
        void unknownTagsAreSkippedAndCounted() throws Exception {
            KvEventBatch b = decode(batch(
                    0L,
                    map("type", "BlockInactive", "block_hashes", "not even hashes"),
                    list("BlockRemoved", list(111L), "GPU"),
                    list("SomethingNew", map("nested", list(1L, 2L))),
                    map("block_hashes", 5L, "type", "BlockMoved")));
            assertThat(b.unknownEvents()).isEqualTo(3);
            assertThat(b.ignoredEvents()).isZero();
            assertThat(b.events()).hasSize(1);
            assertBatchBRemoved(b.events().get(0));
        }

        @Test
        void ignoredTagIsCountedAsIgnored() throws Exception {
            KvEventBatch b = decode(batch(0L, list("Ignored", 1L), map("type", "Ignored"), list("AllBlocksCleared")));
            assertThat(b.ignoredEvents()).isEqualTo(2);
            assertThat(b.unknownEvents()).isZero();
            assertThat(b.events()).containsExactly(new AllBlocksCleared());
        }

        @Test
        void mediumMapsToTier() throws Exception {
            KvEventBatch b = decode(batch(
                    0L,
                    list("BlockRemoved", list(1L), "CPU"),
                    list("BlockRemoved", list(2L), "CPU_PINNED"),
                    list("BlockRemoved", list(3L), "DISK"),
                    list("BlockRemoved", list(4L), "STORAGE"),
                    list("BlockRemoved", list(5L), null),
                    list("BlockRemoved", list(6L)),
                    mapRemoved(list(7L))));
            assertThat(b.events())
                    .extracting(e -> removed(e).tier())
                    .containsExactly(
                            StorageTier.HOST_PINNED,
                            StorageTier.HOST_PINNED,
                            StorageTier.DISK,
                            StorageTier.DISK,
                            StorageTier.DEVICE,
                            StorageTier.DEVICE,
                            StorageTier.DEVICE);
        }

        @Test
        void cpuOffloadPlaceholderDecodes() throws Exception {
            KvEventBatch b = decode(batch(
                    0L,
                    map(
                            "type",
                            "BlockStored",
                            "block_hashes",
                            list(77L),
                            "parent_block_hash",
                            null,
                            "token_ids",
                            list(),
                            "block_size",
                            0L,
                            "lora_id",
                            null,
                            "medium",
                            "CPU",
                            "lora_name",
                            null)));
            BlockStored s = stored(b.events().get(0));
            assertThat(s.blockHashes()).containsExactly(77L);
            assertThat(s.tokenIds()).isEmpty();
            assertThat(s.blockSize()).isZero();
            assertThat(s.tier()).isEqualTo(StorageTier.HOST_PINNED);
            assertThat(s.eagle()).isFalse();
        }

        @Test
        void decoderIsSafeToShareBetweenThreads() {
            byte[] payload = hex(GoldenPayloads.VLLM_MAP_TWO_EVENTS_RANK1);
            long ok = IntStream.range(0, 2000)
                    .parallel()
                    .filter(i -> {
                        try {
                            KvEventBatch b = decoder.decode(payload);
                            return b.events().size() == 2
                                    && stored(b.events().get(1)).parentBlockHash() == 222L;
                        } catch (EventDecodeException e) {
                            return false;
                        }
                    })
                    .count();
            assertThat(ok).isEqualTo(2000);
        }
    }

    @Nested
    class Hashes {

        @Test
        void everyIntegerFormIsAHash() throws Exception {
            BigInteger max = new BigInteger("18446744073709551615");
            // every msgpack integer form in one array: fixint, uint 8/16/32/64 (2^64 - 1 as a BigInteger), negative
            // fixint, int 8/16/64; each is the hash with its 64 bits (2^64 - 1 is -1 as a signed long)
            List<Number> wire = List.of(
                    0L, 127L, 255L, 65535L, 0xFFFF_FFFFL, Long.MAX_VALUE, max, -1L, -32L, -33L, -129L, Long.MIN_VALUE);
            KvEventBatch b = decode(batch(0L, mapRemoved(wire)));
            assertThat(removed(b.events().get(0)).blockHashes())
                    .containsExactly(wire.stream().mapToLong(Number::longValue).toArray());
        }

        @Test
        void parentMayBeUint64NegativeOrBin() throws Exception {
            KvEventBatch b = decode(batch(
                    0L,
                    mapStored(list(1L), new BigInteger("9223372036854775809"), ints(1, 4), 4L),
                    mapStored(list(1L), -7L, ints(1, 4), 4L),
                    mapStored(list(1L), new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9}, ints(1, 4), 4L)));
            assertThat(b.events())
                    .extracting(e -> stored(e).parentBlockHash())
                    .containsExactly(0x8000_0000_0000_0001L, -7L, 0x0203_0405_0607_0809L);
            assertThat(b.events())
                    .allSatisfy(e -> assertThat(stored(e).hasParent()).isTrue());
        }

        @Test
        void shortBinIsItsBigEndianValue() throws Exception {
            KvEventBatch b = decode(batch(
                    0L, mapRemoved(list(new byte[] {0x01, 0x02}, new byte[] {(byte) 0xff}, new byte[0], new byte[] {
                        (byte) 0x80, 0, 0, 0, 0, 0, 0, 1
                    }))));
            assertThat(removed(b.events().get(0)).blockHashes())
                    .containsExactly(0x0102L, 0xffL, 0L, 0x8000_0000_0000_0001L);
        }

        @Test
        void hashOfAnotherTypeIsBadHash() {
            assertFails(batch(0L, mapRemoved(list(1L, "2"))), "bad_hash", "event 0 (BlockRemoved)", "block_hashes[1]");
            assertFails(
                    batch(0L, list("AllBlocksCleared"), mapStored(list(1L), 1.5, ints(1, 4), 4L)),
                    "bad_hash",
                    "event 1 (BlockStored)",
                    "parent_block_hash");
            assertFails(batch(0L, list("BlockRemoved", list(list(1L)))), "bad_hash", "block_hashes[0]");
        }

        @Test
        void blockHashesMustBeAnArray() {
            assertFails(batch(0L, mapRemoved(5L)), "bad_event", "block_hashes");
            assertFails(batch(0L, list("BlockStored", null, null, ints(1, 4), 4L)), "bad_event", "block_hashes");
        }
    }

    @Nested
    class Tokens {

        @Test
        void largestU32TokenIsKeptAsItsBitPattern() throws Exception {
            KvEventBatch b = decode(batch(0L, mapStored(list(1L), null, list(0xFFFF_FFFFL, 0L, 1L, 2L), 4L)));
            assertThat(stored(b.events().get(0)).tokenIds()).containsExactly(-1, 0, 1, 2);
        }

        @Test
        void tokenAboveU32OrNegativeIsBadToken() {
            assertFails(
                    batch(0L, mapStored(list(1L), null, list(1L, 1L << 32, 3L, 4L), 4L)),
                    "bad_token",
                    "event 0 (BlockStored)",
                    "token_ids[1]",
                    "4294967296");
            assertFails(batch(0L, mapStored(list(1L), null, list(1L, 2L, -3L, 4L), 4L)), "bad_token", "token_ids[2]");
            assertFails(
                    batch(0L, mapStored(list(1L), null, list(new BigInteger("18446744073709551615")), 1L)),
                    "bad_token",
                    "18446744073709551615");
            // a string is a token id (TensorRT-LLM types them int | str); a float is not
            assertFails(batch(0L, mapStored(list(1L), null, list(1.5), 1L)), "bad_token", "token_ids[0]");
        }

        /**
         * Every msgpack int form a producer may use for a u32 id, a string id and a 64-bit form in between (the
         * bulk path hands those to the per-element path and carries on), ending at the payload's last byte so the
         * bounds of the final values are the payload's own.
         */
        @Test
        void everyIntFormMixedWithStringIdsDecodesToTheSameIds() throws Exception {
            byte[] ids = hex("05 ccc8 d064 cd9c40 d1012c ce00011170 d200011171 ceffffffff a3313233"
                    + " d30000000000000007 01 cd9c40 ce00011170");
            int count = 13;
            byte[] head = pack(map("type", "BlockStored", "block_hashes", list(1L), "block_size", (long) count));
            byte[] payload = concat(
                    hex("92" + "cb41da2d2c2a100000" + "91"), // [ts, [event]], no rank
                    hex("84"), // the event's map header: 4 keys
                    Arrays.copyOfRange(head, 1, head.length),
                    pack("token_ids"),
                    hex("9d"), // 13 ids
                    ids);

            BlockStored s = stored(decode(payload).events().get(0));

            assertThat(s.tokenIds())
                    .containsExactly(5, 200, 100, 40000, 300, 70000, 70001, -1, 123, 7, 1, 40000, 70000);
        }

        @Test
        void truncatedLastIdIsTruncatedNotMisread() {
            byte[] head = pack(map("type", "BlockStored", "block_hashes", list(1L), "block_size", 2L));
            byte[] payload = concat(
                    hex("92" + "cb41da2d2c2a100000" + "91" + "84"),
                    Arrays.copyOfRange(head, 1, head.length),
                    pack("token_ids"),
                    hex("92" + "cd9c40" + "ce000111")); // the second id lacks its last byte
            assertFails(payload, "truncated");
        }

        /** Dynamo's test_deserialize_bigram_block_stored_sequence: pairs flattened, eagle flagged. */
        @Test
        void bigramPairsAreFlattened() throws Exception {
            List<Object> pairs = list(list(1L, 2L), list(2L, 3L), list(3L, 4L), list(4L, 5L));
            KvEventBatch b = decode(batch(
                    0L,
                    list("BlockStored", list(10L), null, pairs, 3L, null, "GPU"),
                    mapStored(list(10L), null, pairs, 3L)));
            for (KvEvent e : b.events()) {
                BlockStored s = stored(e);
                assertThat(s.tokenIds()).containsExactly(1, 2, 3, 4, 5);
                assertThat(s.eagle()).isTrue();
                assertThat(s.blockSize()).isEqualTo(3);
            }
        }

        @Test
        void badBigramsAreBadToken() {
            assertFails(batch(0L, mapStored(list(1L), null, list(list(1L, 2L), 3L), 1L)), "bad_token", "token_ids[1]");
            assertFails(batch(0L, mapStored(list(1L), null, list(list(1L, 2L, 3L)), 1L)), "bad_token", "pair");
            assertFails(batch(0L, mapStored(list(1L), null, list(list(1L, -2L)), 1L)), "bad_token", "token_ids[0]");
        }

        @Test
        void blockSizeMustBeANonNegativeInt() {
            assertFails(batch(0L, mapStored(list(1L), null, ints(1, 4), "4")), "bad_event", "block_size");
            assertFails(batch(0L, mapStored(list(1L), null, ints(1, 4), -4L)), "bad_event", "block_size");
            assertFails(batch(0L, mapStored(list(1L), null, ints(1, 4), 1L << 31)), "bad_event", "block_size");
        }
    }

    @Nested
    class RequiredFields {

        @Test
        void mapStoredWithoutRequiredFields() {
            assertFails(
                    batch(0L, map("type", "BlockStored", "block_hashes", list(1L), "block_size", 4L)),
                    "bad_event",
                    "event 0 (BlockStored)",
                    "token_ids");
            assertFails(
                    batch(
                            0L,
                            list("AllBlocksCleared"),
                            map("type", "BlockStored", "block_hashes", list(1L), "token_ids", ints(1, 4))),
                    "bad_event",
                    "event 1 (BlockStored)",
                    "block_size");
            assertFails(
                    batch(0L, map("type", "BlockStored", "token_ids", ints(1, 4), "block_size", 4L)),
                    "bad_event",
                    "block_hashes");
            assertFails(batch(0L, map("type", "BlockRemoved", "medium", "GPU")), "bad_event", "block_hashes");
        }

        @Test
        void shortArraysMissRequiredFields() {
            assertFails(
                    batch(0L, list("BlockStored", list(1L), null, ints(1, 4))),
                    "bad_event",
                    "block_size",
                    "4 elements");
            assertFails(batch(0L, list("BlockStored", list(1L))), "bad_event", "token_ids");
            assertFails(batch(0L, list("BlockRemoved")), "bad_event", "block_hashes");
        }

        @Test
        void eventOfAnotherShape() {
            assertFails(batch(0L, 5L), "bad_event", "event 0", "tagged array or map");
            assertFails(batch(0L, list()), "bad_event", "no tag");
            assertFails(batch(0L, list(3L, list(1L))), "bad_event", "tag");
            assertFails(batch(0L, map("block_hashes", list(1L))), "bad_event", "\"type\"");
            assertFails(batch(0L, map("type", 1L)), "bad_event", "type");
        }

        @Test
        void optionalFieldsOfTheWrongType() {
            assertFails(batch(0L, list("BlockRemoved", list(1L), 5L)), "bad_event", "medium");
            assertFails(batch(0L, storedBlockOne("lora_name", 3L)), "bad_event", "lora_name");
            assertFails(batch(0L, mapRemoved(list(1L), "group_idx", "0")), "bad_event", "group_idx");
            assertFails(batch(0L, storedBlockOne("extra_keys", "x")), "bad_event", "extra_keys");
        }
    }

    @Nested
    class PositionalFields {

        /** Dynamo's test_deserialize_vllm_lora_name_at_position_seven. */
        @Test
        void loraNameAtPositionSeven() throws Exception {
            KvEventBatch b =
                    decode(batch(0L, list("BlockStored", list(1L), null, ints(1, 4), 4L, null, "GPU", "my-adapter")));
            BlockStored s = stored(b.events().get(0));
            assertThat(s.loraName()).isEqualTo("my-adapter");
            assertThat(s.tier()).isEqualTo(StorageTier.DEVICE);
        }

        @Test
        void emptyLoraNameIsTheBaseModel() throws Exception {
            KvEventBatch b = decode(batch(
                    0L,
                    list("BlockStored", list(1L), null, ints(1, 4), 4L, null, "GPU", ""),
                    storedBlockOne("lora_name", "")));
            assertThat(b.events())
                    .allSatisfy(e -> assertThat(stored(e).loraName()).isNull());
        }

        @Test
        void sglangMetadataMapAtPositionSevenIsNotALoraName() throws Exception {
            KvEventBatch b = decode(batch(
                    0L,
                    list("BlockStored", list(1L), null, ints(1, 4), 4L, null, "GPU", map("cache_salt", "tenant-a"))));
            assertThat(stored(b.events().get(0)).loraName()).isNull();
            assertThat(stored(b.events().get(0)).cacheSalt()).isEqualTo("tenant-a");
        }

        /** Dynamo's wire tests: a salt of 64 hex digits behind the tag is a salt, not a multimodal hash. */
        @Test
        void aHexSaltBehindTheTagIsNoMultimodalHash() throws Exception {
            String hex = "0123456789abcdef00112233445566778899aabbccddeefffedcba9876543210";
            KvEventBatch b = decode(batch(0L, storedBlockOne("extra_keys", list(list("dynamo-cache-salt:" + hex)))));
            assertThat(stored(b.events().get(0)).cacheSalt()).isEqualTo(hex);
            assertThat(stored(b.events().get(0)).mmHashes()).isNull();
        }

        @Test
        void theCacheSaltComesFromSglangOrFromVllmsTaggedExtraKey() throws Exception {
            KvEventBatch b = decode(batch(
                    0L,
                    storedBlockOne("cache_salt", "tenant-b"),
                    storedBlockOne("cache_salt", ""),
                    storedBlockOne("cache_salt", 7L),
                    storedBlockOne("extra_keys", list(list("adapter-a", "dynamo-cache-salt:tenant-c"))),
                    storedBlockOne("extra_keys", list(list("tenant-d"))),
                    storedBlockOne("extra_keys", list(list("dynamo-cache-salt:")))));
            assertThat(b.events()).hasSize(6);
            assertThat(b.events().stream().map(e -> stored(e).cacheSalt()))
                    .as("an empty salt is none; an untagged extra key is no salt; a non-string is ignored")
                    .containsExactly("tenant-b", null, null, "tenant-c", null, null);
        }

        @Test
        void loraIdIsReadAndDiscarded() throws Exception {
            KvEventBatch b = decode(batch(0L, list("BlockStored", list(1L), null, ints(1, 4), 4L, 42L, "GPU", "a")));
            BlockStored s = stored(b.events().get(0));
            assertThat(s.loraName()).isEqualTo("a");
            assertThat(s.blockSize()).isEqualTo(4);
        }

        @Test
        void extraTrailingElementsAreIgnored() throws Exception {
            List<Object> event = new java.util.ArrayList<>(arrayStored(
                    list(111L, 222L), null, ints(1, 8), 4L, "GPU", null, list(null, null), 0L, "full_attention", null));
            event.add("LOCAL");
            event.add(null); // the ownership slot: a value there would keep the event out of the index
            event.add(list(1L, 2L));
            event.add(map("k", 1L));
            KvEventBatch b = decode(batch(0L, event));
            assertThat(b.ignoredEvents()).isZero();
            assertBatchAStored(b.events().get(0));
        }
    }

    /** compatibility.md, Engine event streams and Dynamo's zmq_wire group_idx tests. */
    @Nested
    class AttentionGroups {

        private KvEventBatch arrayWithTail(Object... tail) throws EventDecodeException {
            List<Object> event = new java.util.ArrayList<>(
                    list("BlockStored", list(1L), null, ints(1, 4), 4L, null, "GPU", null, null));
            event.addAll(List.of(tail).stream().map(o -> o == NIL ? null : o).toList());
            return decode(batch(0L, event));
        }

        private static final Object NIL = new Object();

        @Test
        void acceptsMainGroupIdx() throws Exception {
            assertThat(arrayWithTail(0L).events()).hasSize(1);
        }

        @Test
        void acceptsMissingGroupIdx() throws Exception {
            KvEventBatch b = arrayWithTail(NIL, NIL, NIL);
            assertThat(b.events()).hasSize(1);
            assertThat(b.ignoredEvents()).isZero();
        }

        @Test
        void acceptsEventWithoutGroupIdxSlot() throws Exception {
            KvEventBatch b = arrayWithTail();
            assertThat(b.events()).hasSize(1);
            assertThat(b.ignoredEvents()).isZero();
        }

        @Test
        void nonMainGroupIdxWithoutKindIsIgnored() throws Exception {
            KvEventBatch b = arrayWithTail(1L, NIL, NIL);
            assertThat(b.events()).isEmpty();
            assertThat(b.ignoredEvents()).isEqualTo(1);
        }

        @Test
        void mainAttentionKindWithNonZeroGroupIdxIsAccepted() throws Exception {
            assertThat(arrayWithTail(1L, "full_attention", NIL).events()).hasSize(1);
            assertThat(arrayWithTail(2L, "mla_attention", NIL).events()).hasSize(1);
            assertThat(arrayWithTail(3L, "sink_full_attention").events()).hasSize(1);
        }

        @Test
        void nonMainKindIsIgnoredEvenInGroupZero() throws Exception {
            KvEventBatch b = arrayWithTail(0L, "sliding_window", 4096L);
            assertThat(b.events()).isEmpty();
            assertThat(b.ignoredEvents()).isEqualTo(1);
            assertThat(arrayWithTail(0L, "mamba", NIL).ignoredEvents()).isEqualTo(1);
            assertThat(arrayWithTail(0L, "something_new", NIL).ignoredEvents()).isEqualTo(1);
        }

        @Test
        void slidingWindowIntAfterAMainKindHasNoEffect() throws Exception {
            assertThat(arrayWithTail(0L, "full_attention", 4096L).events()).hasSize(1);
        }

        @Test
        void mapFormFilter() throws Exception {
            KvEventBatch b = decode(batch(
                    0L,
                    mapRemoved(list(1L), "group_idx", 1L),
                    mapRemoved(list(2L), "group_idx", 1L, "kv_cache_spec_kind", "full_attention"),
                    mapRemoved(list(3L), "group_idx", 0L, "kv_cache_spec_kind", "sliding_window"),
                    mapRemoved(list(4L), "group_idx", null),
                    map(
                            "kv_cache_spec_kind",
                            "chunked_local_attention",
                            "type",
                            "BlockStored",
                            "block_hashes",
                            list(5L),
                            "token_ids",
                            ints(1, 4),
                            "block_size",
                            4L)));
            assertThat(b.ignoredEvents()).isEqualTo(3);
            assertThat(b.events()).extracting(e -> removed(e).blockHashes()[0]).containsExactly(2L, 4L);
        }

        @Test
        void removedArrayTailGroup() throws Exception {
            KvEventBatch b = decode(
                    batch(0L, list("BlockRemoved", list(1L), "GPU", 1L), list("BlockRemoved", list(2L), "GPU", 0L)));
            assertThat(b.ignoredEvents()).isEqualTo(1);
            assertThat(removed(b.events().get(0)).blockHashes()).containsExactly(2L);
        }
    }

    @Nested
    class ExtraKeys {

        private static final String HEX64 = "0123456789abcdef" + "f".repeat(48);

        private BlockStored storedWith(Object extraKeys, Object lora, int blocks) throws EventDecodeException {
            Object[] hashes = new Object[blocks];
            for (int i = 0; i < blocks; i++) {
                hashes[i] = (long) (100 + i);
            }
            return stored(decode(batch(
                            0L,
                            map(
                                    "type",
                                    "BlockStored",
                                    "block_hashes",
                                    list(hashes),
                                    "parent_block_hash",
                                    null,
                                    "token_ids",
                                    ints(1, 4 * blocks),
                                    "block_size",
                                    4L,
                                    "lora_name",
                                    lora,
                                    "extra_keys",
                                    extraKeys)))
                    .events()
                    .get(0));
        }

        @Test
        void noExtraKeysGivesNoMultimodalHashes() throws Exception {
            assertThat(storedWith(null, null, 2).mmHashes()).isNull();
            assertThat(storedWith(list(null, null), null, 2).mmHashes()).isNull();
            assertThat(storedWith(list(list(), list("cache-salt-value")), null, 2)
                            .mmHashes())
                    .isNull();
        }

        @Test
        void canonicalHexStringIsItsFirstSixteenHexChars() throws Exception {
            BlockStored s = storedWith(list(null, list(HEX64)), null, 2);
            assertThat(s.mmHashes()).hasNumberOfRows(2);
            assertThat(s.mmHashes()[0]).isNull();
            assertThat(s.mmHashes()[1]).containsExactly(0x0123456789abcdefL);
        }

        @Test
        void upperCaseHexAndValuesAboveLongMax() throws Exception {
            String hex = "FEDCBA9876543210" + "0".repeat(48);
            assertThat(storedWith(list(list(hex)), null, 1).mmHashes()[0]).containsExactly(0xfedcba9876543210L);
        }

        @Test
        void tuplesUseCanonicalHexElseXxh3OfTheIdentifier() throws Exception {
            long expected = Hashing.xxh3_64(0L).hashBytesToLong("image-42".getBytes(StandardCharsets.UTF_8));
            BlockStored s = storedWith(list(list(list(HEX64, 0L), list("image-42", 16L))), null, 1);
            assertThat(s.mmHashes()[0]).containsExactly(0x0123456789abcdefL, expected);
        }

        @Test
        void bareStringsThatAreNotHexOrAreTheLoraNameAreIgnored() throws Exception {
            String hexLora = "a".repeat(64);
            BlockStored s = storedWith(list(list(hexLora, "salt", "ab", HEX64 + "0", HEX64)), hexLora, 1);
            assertThat(s.mmHashes()[0]).containsExactly(0x0123456789abcdefL);
            assertThat(s.loraName()).isEqualTo(hexLora);
        }

        @Test
        void otherItemsAreSkipped() throws Exception {
            BlockStored s = storedWith(
                    list(list(new byte[] {1, 2}, 5L, map("cache_salt", "x"), list(7L, 1L), list(), HEX64)), null, 1);
            assertThat(s.mmHashes()[0]).containsExactly(0x0123456789abcdefL);
        }

        @Test
        void moreExtraKeyEntriesThanBlocksAreIgnored() throws Exception {
            BlockStored s = storedWith(list(null, list(HEX64)), null, 1);
            assertThat(s.mmHashes()).isNull();
        }

        @Test
        void positionalExtraKeysAtPositionEight() throws Exception {
            KvEventBatch b = decode(batch(
                    0L,
                    arrayStored(
                            list(1L, 2L),
                            null,
                            ints(1, 8),
                            4L,
                            "GPU",
                            null,
                            list(list(HEX64), null),
                            0L,
                            "full_attention",
                            null)));
            BlockStored s = stored(b.events().get(0));
            assertThat(s.mmHashes()[0]).containsExactly(0x0123456789abcdefL);
            assertThat(s.mmHashes()[1]).isNull();
        }
    }

    @Nested
    class Bounds {

        @Test
        void hugeDeclaredArrayInATinyPayload() {
            // array32 declaring 2^31-1 elements in 5 bytes
            assertFails(hex("dd7fffffff"), "truncated", "envelope");
            assertFails(hex("ddffffffff"), "truncated");
        }

        @Test
        void hugeDeclaredLengthsInsideEvents() {
            String prefix = "93cb41da30549810000091";
            assertFails(hex(prefix + "dd7fffffff"), "truncated", "event");
            assertFails(hex(prefix + "df7fffffff"), "truncated");
            // BlockRemoved whose block_hashes array declares 2^31-1 hashes
            assertFails(hex(prefix + "92ac426c6f636b52656d6f766564dd7fffffff00"), "truncated", "block_hashes");
            // a bin32 hash declaring 2^31-1 bytes
            assertFails(hex(prefix + "92ac426c6f636b52656d6f76656491c67fffffff00"), "truncated", "block_hashes");
            // a str32 tag declaring 2^31-1 bytes
            assertFails(hex(prefix + "91db7fffffff00"), "truncated");
            // a str32 key inside a map declaring 4 GiB - 1
            assertFails(hex(prefix + "81dbffffffff00"), "truncated");
        }

        @Test
        void hugeTokenArray() {
            byte[] payload = hex("93cb41da30549810000091"
                    + "85a474797065ab426c6f636b53746f726564ac626c6f636b5f68617368657391" + "01"
                    + "a9746f6b656e5f696473dd7fffffff");
            assertFails(payload, "truncated", "token_ids");
        }
    }
}
