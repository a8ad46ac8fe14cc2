package io.kvindexer.indexer.event;

import static io.kvindexer.indexer.event.EventAssert.removed;
import static io.kvindexer.indexer.event.EventAssert.stored;
import static io.kvindexer.indexer.event.Msgpack.TS;
import static io.kvindexer.indexer.event.Msgpack.batch;
import static io.kvindexer.indexer.event.Msgpack.ints;
import static io.kvindexer.indexer.event.Msgpack.list;
import static io.kvindexer.indexer.event.Msgpack.map;
import static io.kvindexer.indexer.event.Msgpack.mapRemoved;
import static io.kvindexer.indexer.event.Msgpack.pack;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.hash.BlockHasher;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The engine streams as they are in late 2026 (vLLM 0.26+, SGLang, TensorRT-LLM's streaming publisher, ROCm ATOM,
 * Dynamo's own tails, llm-d's shared-storage publisher), as hand-built msgpack frames, one shape per test.
 */
class CurrentStreamsDecoderTest {

    private static final String HEX64 = "0123456789abcdef" + "e".repeat(48);

    private final EngineEventDecoder decoder = new EngineEventDecoder();

    private KvEventBatch decode(byte[] payload) throws EventDecodeException {
        return decoder.decode(payload);
    }

    /** One batch of dp rank 0 holding {@code events}, decoded. */
    private KvEventBatch decodeEvents(Object... events) throws EventDecodeException {
        return decode(batch(0L, events));
    }

    private static Map<String, Object> mapStored(Object... extra) {
        List<Object> kv = new ArrayList<>(List.of(
                "type",
                "BlockStored",
                "block_hashes",
                list(111L, 222L),
                "token_ids",
                ints(1, 8),
                "block_size",
                4L,
                "medium",
                "GPU"));
        kv.addAll(Arrays.asList(extra));
        return map(kv.toArray());
    }

    /** vLLM's 12-element positional BlockStored followed by {@code tail} (positions 12 and on). */
    private static List<Object> arrayStored(Object group, Object kind, Object window, Object... tail) {
        List<Object> event = new ArrayList<>(Arrays.asList(
                "BlockStored",
                list(111L, 222L),
                null,
                ints(1, 8),
                4L,
                null,
                "GPU",
                null,
                list(null, null),
                group,
                kind,
                window));
        event.addAll(Arrays.asList(tail));
        return event;
    }

    @Nested
    class Media {

        @ParameterizedTest
        @CsvSource({
            "GPU,DEVICE",
            "device,DEVICE",
            "CPU,HOST_PINNED",
            "cpu_pinned,HOST_PINNED",
            "CPU_TIER1,HOST_PINNED",
            "CPU_TIER2,DISK",
            "Disk,DISK",
            "NVME,DISK",
            "STORAGE,DISK",
            "fs,DISK",
            "EXTERNAL,EXTERNAL",
            "network,EXTERNAL",
            "REMOTE,EXTERNAL",
            "SHARED,EXTERNAL",
            "Shared_Storage,EXTERNAL",
            "OBJECT_STORE,EXTERNAL",
            "OBJ,EXTERNAL"
        })
        void knownMediaCaseInsensitive(String medium, StorageTier tier) throws Exception {
            KvEventBatch b = decodeEvents(list("BlockRemoved", list(1L), medium));
            assertThat(removed(b.events().get(0)).tier()).isEqualTo(tier);
            assertThat(b.warnings()).isEmpty();
        }

        @Test
        void absentNilOrEmptyIsDevice() throws Exception {
            KvEventBatch b = decodeEvents(
                    list("BlockRemoved", list(1L)),
                    list("BlockRemoved", list(2L), null),
                    list("BlockRemoved", list(3L), ""));
            assertThat(b.events()).extracting(e -> removed(e).tier()).containsOnly(StorageTier.DEVICE);
            assertThat(b.warnings()).isEmpty();
        }

        @Test
        void unknownMediumIsKeptOnTheExternalTierAndCounted() throws Exception {
            KvEventBatch b = decodeEvents(mapStored("medium", "HBM3_POOL"), list("BlockRemoved", list(1L), "tape"));
            assertThat(b.events()).hasSize(2);
            assertThat(stored(b.events().get(0)).tier()).isEqualTo(StorageTier.EXTERNAL);
            assertThat(removed(b.events().get(1)).tier()).isEqualTo(StorageTier.EXTERNAL);
            assertThat(b.warnings()).containsExactly(Map.entry(EventWarning.UNKNOWN_MEDIUM, 2));
        }
    }

    @Nested
    class LocalityAndOwnership {

        @Test
        void nonLocalCopiesAreNotIndexedInEitherEncoding() throws Exception {
            KvEventBatch b = decodeEvents(
                    mapStored("locality", "REMOTE"),
                    mapRemoved(list(5L), "medium", "STORAGE", "locality", "PEER"),
                    arrayStored(0L, "full_attention", null, "REMOTE"),
                    list("BlockRemoved", list(6L), "GPU", 0L, null, null, "REMOTE"),
                    mapStored("locality", "LOCAL"),
                    mapStored("locality", "local"), // not a value vLLM writes: not vouched for
                    arrayStored(0L, "full_attention", null, "LOCAL"));
            assertThat(b.events())
                    .hasSize(2)
                    .allSatisfy(e -> assertThat(stored(e).blockHashes()).containsExactly(111L, 222L));
            assertThat(b.ignoredEvents()).isEqualTo(5);
            assertThat(b.warnings()).containsExactly(Map.entry(EventWarning.NON_LOCAL, 5));
        }

        /**
         * vLLM's own {@code BlockRemoved} declares {@code block_hashes, medium, group_idx, locality, ownership}: in
         * its positional form the locality is the second tail slot, not the fourth of a store's tail. Both removals
         * below are non-local copies, and both count as such (not as an unknown cache group).
         */
        @Test
        void aRemoteRemovalCountsAsNonLocalInBothEncodings() throws Exception {
            KvEventBatch b = decodeEvents(
                    mapRemoved(list(5L), "medium", "GPU", "group_idx", 0L, "locality", "REMOTE"),
                    list("BlockRemoved", list(6L), "GPU", 0L, "REMOTE"),
                    list("BlockRemoved", list(7L), "GPU", 0L, "LOCAL"),
                    list("BlockRemoved", list(8L), "GPU", 0L, "REMOTE", "kvcr"));
            assertThat(b.events()).hasSize(1);
            assertThat(removed(b.events().get(0)).blockHashes()).containsExactly(7L);
            assertThat(b.warnings())
                    .containsExactlyInAnyOrderEntriesOf(Map.of(EventWarning.NON_LOCAL, 2, EventWarning.OWNERSHIP, 1));
        }

        @Test
        void ownedByAnotherDomainIsNotIndexed() throws Exception {
            KvEventBatch b = decodeEvents(
                    mapStored("ownership", "kvcr"),
                    mapRemoved(list(5L), "ownership", "tier-x"),
                    arrayStored(0L, "full_attention", null, "LOCAL", "kvcr"),
                    list("BlockRemoved", list(6L), "GPU", 0L, null, null, null, "kvcr"),
                    mapStored("ownership", null));
            assertThat(b.events()).hasSize(1);
            assertThat(b.warnings()).containsExactly(Map.entry(EventWarning.OWNERSHIP, 4));
        }

        @Test
        void clearWithAnOwnershipTailDoesNotClear() throws Exception {
            KvEventBatch b = decodeEvents(
                    list("AllBlocksCleared", "kvcr"),
                    map("type", "AllBlocksCleared", "ownership", "kvcr"),
                    list("AllBlocksCleared", null),
                    map("type", "AllBlocksCleared", "ownership", null),
                    list("AllBlocksCleared", "CPU")); // ROCm ATOM: the medium of a one-tier clear
            assertThat(b.events())
                    .containsExactly(new AllBlocksCleared(), new AllBlocksCleared(), new AllBlocksCleared());
            assertThat(b.warnings()).containsExactly(Map.entry(EventWarning.OWNERSHIP, 2));
        }
    }

    @Nested
    class HybridModels {

        /** A store of each cache group kind, alone in its batch: only full-attention kinds hold prefix state. */
        static Stream<Arguments> onlyFullAttentionKindsAreAdmitted() {
            return Stream.of(
                    Arguments.of(
                            "full_attention", mapStored("group_idx", 0L, "kv_cache_spec_kind", "full_attention"), true),
                    Arguments.of(
                            "mla_attention", mapStored("group_idx", 1L, "kv_cache_spec_kind", "mla_attention"), true),
                    Arguments.of(
                            "sink_full_attention",
                            mapStored("group_idx", 2L, "kv_cache_spec_kind", "sink_full_attention"),
                            true),
                    Arguments.of("no kind", mapStored(), true),
                    Arguments.of(
                            "sliding_window",
                            mapStored(
                                    "group_idx",
                                    3L,
                                    "kv_cache_spec_kind",
                                    "sliding_window",
                                    "kv_cache_spec_sliding_window",
                                    4096L),
                            false),
                    Arguments.of("mamba", mapStored("group_idx", 4L, "kv_cache_spec_kind", "mamba"), false),
                    Arguments.of(
                            "chunked_local_attention",
                            mapStored("group_idx", 5L, "kv_cache_spec_kind", "chunked_local_attention"),
                            false),
                    Arguments.of(
                            "cross_attention",
                            mapStored("group_idx", 6L, "kv_cache_spec_kind", "cross_attention"),
                            false));
        }

        @ParameterizedTest(name = "{0}")
        @MethodSource
        void onlyFullAttentionKindsAreAdmitted(String kind, Map<String, Object> store, boolean admitted)
                throws Exception {
            KvEventBatch b = decodeEvents(store);
            assertThat(b.events()).hasSize(admitted ? 1 : 0);
            assertThat(b.warnings()).isEqualTo(admitted ? Map.of() : Map.of(EventWarning.SKIPPED_CACHE_GROUP, 1));
        }

        @Test
        void removalsOfAGroupLearnedAsSkippedAreSkippedLaterInTheSameStream() throws Exception {
            CacheGroups stream = new CacheGroups();
            KvEventBatch first = decoder.decode(
                    batch(
                            0L,
                            mapStored("group_idx", 1L, "kv_cache_spec_kind", "sliding_window"),
                            mapStored("group_idx", 2L, "kv_cache_spec_kind", "full_attention")),
                    stream);
            assertThat(first.events()).hasSize(1);
            byte[] removals = batch(
                    0L,
                    mapRemoved(list(7L), "group_idx", 1L),
                    mapRemoved(list(8L), "group_idx", 2L),
                    list("BlockRemoved", list(9L), "GPU", 1L));
            KvEventBatch later = decoder.decode(removals, stream);
            assertThat(later.events())
                    .extracting(e -> removed(e).blockHashes()[0])
                    .containsExactly(8L);
            assertThat(later.warnings()).containsExactly(Map.entry(EventWarning.SKIPPED_CACHE_GROUP, 2));
            // another stream has learned nothing: an unannounced group other than 0 cannot be vouched for
            assertThat(decoder.decode(removals).events()).isEmpty();
        }

        @Test
        void storesWhoseTokensDoNotFillTheirBlocksAreSkipped() throws Exception {
            KvEventBatch b = decodeEvents(
                    mapStored("token_ids", ints(1, 12)), // 3 blocks of tokens for 2 hashes (a masked block)
                    mapStored("token_ids", ints(1, 6)),
                    mapStored("block_size", 0L),
                    mapStored(
                            "token_ids",
                            list(
                                    list(1L, 2L),
                                    list(2L, 3L),
                                    list(3L, 4L),
                                    list(4L, 5L),
                                    list(5L, 6L),
                                    list(6L, 7L),
                                    list(7L, 8L),
                                    list(8L, 9L))), // EAGLE pairs, dense
                    mapStored());
            assertThat(b.events()).hasSize(2);
            assertThat(stored(b.events().get(0)).eagle()).isTrue();
            assertThat(b.warnings()).containsExactly(Map.entry(EventWarning.SPARSE_SPAN, 3));
        }
    }

    @Nested
    class TensorRtLlm {

        @Test
        void streamingStoreWithItsTail() throws Exception {
            KvEventBatch b = decodeEvents(mapStored(
                    "parent_block_hash",
                    null,
                    "lora_id",
                    null,
                    "lora_name",
                    null,
                    "group_idx",
                    0L,
                    "kv_cache_spec_kind",
                    "full_attention",
                    "kv_cache_spec_sliding_window",
                    8192L,
                    "locality",
                    "LOCAL",
                    "mm_keys",
                    list(list(map("type", "mm_key", "hash", HEX64, "start_offset", 1L, "uuid", "img-1")), null)));
            BlockStored s = stored(b.events().get(0));
            assertThat(s.mmHashes()[0]).containsExactly(0x0123456789abcdefL);
            assertThat(s.mmHashes()[1]).isNull();
            assertThat(s.tokenIds()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
            assertThat(b.warnings()).isEmpty();
        }

        @Test
        void mmKeysMixIntoTheLocalHashLikeVllmExtraKeys() throws Exception {
            BlockStored trt = stored(decodeEvents(mapStored(
                            "mm_keys", list(list(map("type", "mm_key", "hash", "not-hex", "start_offset", 0L)), null)))
                    .events()
                    .get(0));
            BlockStored vllm = stored(decodeEvents(mapStored("extra_keys", list(list(list("not-hex", 0L)), null)))
                    .events()
                    .get(0));
            assertThat(trt.mmHashes()[0]).containsExactly(vllm.mmHashes()[0]);
        }

        @Test
        void tokenIdsMayBeStrings() throws Exception {
            BlockStored numeric = stored(decodeEvents(mapStored("token_ids", list("1", 2L, "3", 4L, 5L, 6L, 7L, "8")))
                    .events()
                    .get(0));
            assertThat(numeric.tokenIds()).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
            // a token that is not a number: the blocks from the one holding it cannot be hashed
            BlockStored opaque = stored(decodeEvents(mapStored("token_ids", list(1L, 2L, 3L, 4L, 5L, "<img>", 7L, 8L)))
                    .events()
                    .get(0));
            assertThat(opaque.tokenIds()).containsExactly(1, 2, 3, 4, 5);
            assertThat(opaque.blockHashes()).containsExactly(111L, 222L);
        }
    }

    @Test
    void rocmAtomTrailingTokenOffsetChangesNothing() throws Exception {
        KvEventBatch b = decodeEvents(arrayStored(0L, null, null, 32L));
        assertThat(b.events()).hasSize(1);
        assertThat(b.ignoredEvents()).isZero();
        assertThat(stored(b.events().get(0)).mmHashes()).isNull();
    }

    @Nested
    class DynamoBlockMmInfos {

        private final long seed = BlockHasher.seed(null);

        @Test
        void mapKeyIsMixedIntoTheLocalHash() throws Exception {
            BlockStored s = stored(decodeEvents(mapStored(
                            "block_mm_infos",
                            list(
                                    map(
                                            "mm_objects",
                                            list(
                                                    map("mm_hash", 123L, "offsets", list(list(0L, 2L))),
                                                    map("mm_hash", 5L, "offsets", list()))),
                                    null)))
                    .events()
                    .get(0));
            assertThat(s.mmHashes()[0]).containsExactly(123L, 5L);
            assertThat(s.mmHashes()[1]).isNull();
            long withImage = BlockHasher.hashBlock(s.tokenIds(), 0, 4, seed, s.mmHashes()[0]);
            assertThat(withImage).isNotEqualTo(BlockHasher.hashBlock(s.tokenIds(), 0, 4, seed, null));
        }

        @Test
        void positionalTailArrayAndArrayStructs() throws Exception {
            List<Object> event = new ArrayList<>(
                    Arrays.asList("BlockStored", list(111L, 222L), null, ints(1, 8), 4L, null, "GPU", null, null));
            event.add(list(null, list(list(list(77L, list())))));
            event.add(0L);
            event.add("full_attention");
            BlockStored s = stored(decodeEvents(event).events().get(0));
            assertThat(s.mmHashes()[0]).isNull();
            assertThat(s.mmHashes()[1]).containsExactly(77L);
        }
    }

    @Nested
    class LlmdSharedStorage {

        private byte[] storageBatch(Object... events) {
            List<Object> packed = new ArrayList<>();
            for (Object e : events) {
                packed.add(pack(e));
            }
            return pack(list(TS, packed)); // two elements: no dp rank
        }

        @Test
        void binPackedArrayEventsInATwoElementEnvelope() throws Exception {
            KvEventBatch b = decode(storageBatch(
                    list("BlockStored", list(0xABCDEF0123456789L, 7L), 0L, list(), 0L, null, "SHARED_STORAGE"),
                    list("BlockRemoved", list(7L), "OBJECT_STORE")));
            assertThat(b.dataParallelRank()).isNull();
            BlockStored s = stored(b.events().get(0));
            assertThat(s.blockHashes()).containsExactly(0xABCDEF0123456789L, 7L);
            assertThat(s.hasParent()).as("parent 0 means none").isFalse();
            assertThat(s.tokenIds()).isEmpty();
            assertThat(s.blockSize()).isZero();
            assertThat(s.hashesOnly()).isTrue();
            assertThat(s.tier()).isEqualTo(StorageTier.EXTERNAL);
            assertThat(removed(b.events().get(1)).tier()).isEqualTo(StorageTier.EXTERNAL);
            assertThat(b.warnings()).isEmpty();
        }

        @Test
        void damagedPackedEventsAreBadEvents() {
            byte[] event = pack(list("BlockRemoved", list(7L), "OBJECT_STORE"));
            byte[] extra = Arrays.copyOf(event, event.length + 2); // two bytes after the event inside the bin
            assertThatThrownBy(() -> decode(pack(list(TS, list((Object) extra)))))
                    .isInstanceOfSatisfying(EventDecodeException.class, e -> {
                        assertThat(e.errorKind()).isEqualTo(DecodeErrorKind.BAD_EVENT);
                        assertThat(e.getMessage()).contains("event 0", "after the event");
                    });
            assertThatThrownBy(() -> decode(pack(list(TS, list((Object) pack(42L))))))
                    .isInstanceOfSatisfying(
                            EventDecodeException.class,
                            e -> assertThat(e.kind()).isEqualTo("bad_event"));
            byte[] cut = Arrays.copyOf(pack(list("BlockRemoved", list(7L), "OBJECT_STORE")), 5);
            assertThatThrownBy(() -> decode(pack(list(TS, list((Object) cut)))))
                    .isInstanceOfSatisfying(
                            EventDecodeException.class,
                            e -> assertThat(e.kind()).isEqualTo("truncated"));
        }
    }

    /** The bulk paths read hashes and token ids straight from the bytes: every msgpack int form must agree. */
    @Test
    void bulkDecodingAcceptsEveryIntegerForm() throws Exception {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        out.write(0x93);
        out.writeBytes(pack(TS));
        out.write(0x91);
        out.write(0x84);
        out.writeBytes(pack("type"));
        out.writeBytes(pack("BlockStored"));
        out.writeBytes(pack("block_hashes"));
        out.writeBytes(Msgpack.hex("94 d3fffffffffffffffe d0ff e0 cfffffffffffffffff"));
        out.writeBytes(pack("token_ids"));
        out.writeBytes(Msgpack.hex("98 05 cc80 cd0100 ceffffffff d005 d10100 d200010000 7f"));
        out.writeBytes(pack("block_size"));
        out.write(0x02);
        out.writeBytes(pack(0L));
        BlockStored s = stored(decode(out.toByteArray()).events().get(0));
        assertThat(s.blockHashes()).containsExactly(-2L, -1L, -32L, -1L);
        assertThat(s.tokenIds()).containsExactly(5, 128, 256, -1, 5, 256, 65536, 127);
    }

    @Test
    void everyErrorKindKeepsItsMetricLabel() {
        assertThat(Arrays.stream(DecodeErrorKind.values()).map(DecodeErrorKind::label))
                .containsExactly(
                        "empty_payload",
                        "not_msgpack",
                        "truncated",
                        "bad_envelope",
                        "bad_event",
                        "bad_hash",
                        "bad_token",
                        "malformed");
        assertThat(Arrays.stream(EventWarning.values()).map(EventWarning::label))
                .containsExactly(
                        "unknown_medium",
                        "non_local",
                        "ownership",
                        "skipped_cache_group",
                        "sparse_span",
                        "duplicate_store",
                        "unknown_storage_block");
    }
}
