package io.kvindexer.indexer.dump;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvindexer.indexer.common.StorageTier;
import io.kvindexer.indexer.hash.BlockHasher;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The RouterEvent JSON of compatibility.md, HTTP API: exact output, unsigned u64 numbers, tolerant input. */
class RouterEventJsonTest {

    private static final long MAX_U64 = -1L;
    private static final long ABOVE_2_63 = Long.parseUnsignedLong("9223372036854775809");
    private static final long ABOVE_2_53 = 9_007_199_254_740_993L; // 2^53 + 1: not representable as a double

    static void assertSameEvent(RouterEvent actual, RouterEvent expected) {
        assertThat(actual.instanceId()).isEqualTo(expected.instanceId());
        assertThat(actual.dpRank()).isEqualTo(expected.dpRank());
        assertThat(actual.tier()).isEqualTo(expected.tier());
        assertThat(actual.eventId()).isEqualTo(expected.eventId());
        switch (expected.data()) {
            case RouterEvent.Stored s -> {
                assertThat(actual.data()).isInstanceOf(RouterEvent.Stored.class);
                RouterEvent.Stored a = (RouterEvent.Stored) actual.data();
                assertThat(a.hasParent()).isEqualTo(s.hasParent());
                assertThat(a.parentBlockHash()).isEqualTo(s.parentBlockHash());
                assertThat(a.blockHashes()).containsExactly(s.blockHashes());
                assertThat(a.localHashes()).containsExactly(s.localHashes());
            }
            case RouterEvent.Removed r -> {
                assertThat(actual.data()).isInstanceOf(RouterEvent.Removed.class);
                assertThat(((RouterEvent.Removed) actual.data()).blockHashes()).containsExactly(r.blockHashes());
            }
            case RouterEvent.Cleared c -> assertThat(actual.data()).isEqualTo(c);
        }
    }

    private static RouterEvent roundTrip(RouterEvent event) throws EventJsonException {
        RouterEvent back = RouterEventJson.fromJson(RouterEventJson.toJson(event));
        assertSameEvent(back, event);
        return back;
    }

    @Test
    void specV1ExampleExactly() throws Exception {
        long tokensHash = BlockHasher.localHashes(IntStream.rangeClosed(1, 16).toArray(), 16, BlockHasher.BASE_SEED)[0];
        long engineHash = 0xea06fc71a5ee6e88L;
        RouterEvent event = new RouterEvent(
                1, 0, StorageTier.DEVICE, 0, new RouterEvent.Stored(false, 0, new long[] {engineHash}, new long[] {
                    tokensHash
                }));
        assertThat(RouterEventJson.toJson(event))
                .isEqualTo("{\"worker_id\":1,\"storage_tier\":\"device\",\"event\":"
                        + "{\"event_id\":0,\"data\":{\"stored\":{\"parent_hash\":null,\"start_position\":null,\"blocks\":"
                        + "[{\"block_hash\":16863443419780771464,\"tokens_hash\":16863443419780771464,\"mm_extra_info\":null}]}},"
                        + "\"dp_rank\":0}}");
        roundTrip(event);
    }

    @Test
    void storedWithParentAndLargeValuesIsUnsignedAndUnquoted() throws Exception {
        RouterEvent event = new RouterEvent(
                MAX_U64,
                3,
                StorageTier.DISK,
                ABOVE_2_63,
                new RouterEvent.Stored(true, ABOVE_2_53, new long[] {MAX_U64, 5}, new long[] {ABOVE_2_63, -2L}));
        assertThat(RouterEventJson.toJson(event))
                .isEqualTo(
                        "{\"worker_id\":18446744073709551615,"
                                + "\"storage_tier\":\"disk\",\"event\":{\"event_id\":9223372036854775809,\"data\":{\"stored\":"
                                + "{\"parent_hash\":9007199254740993,\"start_position\":null,\"blocks\":["
                                + "{\"block_hash\":18446744073709551615,\"tokens_hash\":9223372036854775809,\"mm_extra_info\":null},"
                                + "{\"block_hash\":5,\"tokens_hash\":18446744073709551614,\"mm_extra_info\":null}]}},\"dp_rank\":3}}");
        roundTrip(event);
    }

    /**
     * A dump's block carries {@code last_store_ms} after Dynamo's fields, only when it has a time; reading keeps it
     * per block (none: {@link RouterEvent.Stored#NO_TIME}), and anything but a 64-bit integer (or null) is refused.
     */
    @Test
    void aBlocksLastStoreTimeIsWrittenWhenItHasOneAndReadBack() throws Exception {
        RouterEvent event = new RouterEvent(
                1,
                0,
                StorageTier.DEVICE,
                0,
                new RouterEvent.Stored(false, 0, new long[] {5, 6}, new long[] {7, 8}, new long[] {
                    1_765_000_000_000L, RouterEvent.Stored.NO_TIME
                }));
        assertThat(RouterEventJson.toJson(event))
                .contains("{\"block_hash\":5,\"tokens_hash\":7,\"mm_extra_info\":null,\"last_store_ms\":1765000000000}")
                .contains("{\"block_hash\":6,\"tokens_hash\":8,\"mm_extra_info\":null}");
        RouterEvent.Stored back = (RouterEvent.Stored) roundTrip(event).data();
        assertThat(back.lastStoreMillis()).containsExactly(1_765_000_000_000L, RouterEvent.Stored.NO_TIME);

        String noTimes = "{\"worker_id\":1,\"event\":{\"data\":{\"stored\":{\"parent_hash\":null,"
                + "\"blocks\":[{\"block_hash\":5,\"tokens_hash\":7}]}}}}";
        assertThat(((RouterEvent.Stored) RouterEventJson.fromJson(noTimes).data()).lastStoreMillis())
                .as("Dynamo's blocks have none")
                .isNull();
        // a negative or far-future time is read as it is: block expiry clamps it (StoreTimesRecoveryTest)
        String negative = noTimes.replace("\"tokens_hash\":7", "\"tokens_hash\":7,\"last_store_ms\":-5");
        assertThat(((RouterEvent.Stored) RouterEventJson.fromJson(negative).data()).lastStoreMillis())
                .containsExactly(-5L);
        assertThatThrownBy(() -> RouterEventJson.fromJson(
                        noTimes.replace("\"tokens_hash\":7", "\"tokens_hash\":7,\"last_store_ms\":\"soon\"")))
                .isInstanceOf(EventJsonException.class)
                .hasMessageContaining("event.data.stored.blocks[0].last_store_ms: expected epoch milliseconds");
        assertThatThrownBy(() -> RouterEventJson.fromJson(
                        noTimes.replace("\"tokens_hash\":7", "\"tokens_hash\":7,\"last_store_ms\":1e3")))
                .isInstanceOf(EventJsonException.class)
                .hasMessageContaining("last_store_ms");
    }

    @Test
    void removedAndClearedShapes() throws Exception {
        RouterEvent removed = new RouterEvent(
                7, -1, StorageTier.HOST_PINNED, 2, new RouterEvent.Removed(new long[] {MAX_U64, ABOVE_2_53}));
        assertThat(RouterEventJson.toJson(removed))
                .isEqualTo("{\"worker_id\":7,\"storage_tier\":\"host_pinned\","
                        + "\"event\":{\"event_id\":2,\"data\":{\"removed\":{\"block_hashes\":[18446744073709551615,"
                        + "9007199254740993]}},\"dp_rank\":4294967295}}");
        roundTrip(removed);

        RouterEvent cleared = new RouterEvent(7, 1, StorageTier.EXTERNAL, 3, new RouterEvent.Cleared());
        assertThat(RouterEventJson.toJson(cleared))
                .isEqualTo("{\"worker_id\":7,\"storage_tier\":\"external\","
                        + "\"event\":{\"event_id\":3,\"data\":\"cleared\",\"dp_rank\":1}}");
        roundTrip(cleared);
    }

    @Test
    void everyTierRoundTrips() throws Exception {
        for (StorageTier tier : StorageTier.values()) {
            assertThat(roundTrip(new RouterEvent(1, 0, tier, 0, new RouterEvent.Cleared()))
                            .tier())
                    .isEqualTo(tier);
        }
    }

    @Test
    void readIsTolerantOfDefaultsAndUnknownFields() throws Exception {
        RouterEvent e = RouterEventJson.fromJson("""
                {"future": {"x": [1, 2]}, "worker_id": 18446744073709551615,
                 "event": {"data": {"stored": {"parent_hash": -1, "extra": true,
                   "blocks": [{"mm_extra_info": {"mm_objects": [{"mm_hash": 5, "offsets": [[0, 4]]}]},
                               "tokens_hash": 9007199254740993, "block_hash": 1, "later": null}]}},
                   "lora_name": "x"}}""");
        assertThat(e.instanceId()).isEqualTo(MAX_U64);
        assertThat(e.tier()).isEqualTo(StorageTier.DEVICE);
        assertThat(e.dpRank()).isZero();
        assertThat(e.eventId()).isZero();
        RouterEvent.Stored s = (RouterEvent.Stored) e.data();
        assertThat(s.hasParent()).isTrue();
        assertThat(s.parentBlockHash()).isEqualTo(MAX_U64);
        assertThat(s.blockHashes()).containsExactly(1L);
        assertThat(s.localHashes()).containsExactly(ABOVE_2_53);
    }

    @Test
    void g1StoredWithoutStartPositionAndClearedAsObject() throws Exception {
        RouterEvent stored = RouterEventJson.fromJson("{\"worker_id\":2,\"storage_tier\":\"device\",\"event\":"
                + "{\"event_id\":9,\"data\":{\"stored\":{\"parent_hash\":null,\"blocks\":[]}},\"dp_rank\":1}}");
        assertThat(((RouterEvent.Stored) stored.data()).blockHashes()).isEmpty();
        assertThat(((RouterEvent.Stored) stored.data()).hasParent()).isFalse();
        assertThat(stored.dpRank()).isEqualTo(1);
        assertThat(stored.eventId()).isEqualTo(9);

        RouterEvent cleared = RouterEventJson.fromJson("{\"worker_id\":2,\"event\":{\"data\":{\"cleared\":null}}}");
        assertThat(cleared.data()).isEqualTo(new RouterEvent.Cleared());
    }

    @Test
    void errorsNameTheField() {
        assertError("{\"event\":{\"data\":\"cleared\"}}", "worker_id: missing");
        assertError("{\"worker_id\":\"1\",\"event\":{\"data\":\"cleared\"}}", "worker_id: expected");
        assertError("{\"worker_id\":18446744073709551616,\"event\":{\"data\":\"cleared\"}}", "worker_id", "range");
        assertError("{\"worker_id\":1.5,\"event\":{\"data\":\"cleared\"}}", "worker_id", "decimal");
        assertError("{\"worker_id\":1}", "event: missing");
        assertError("{\"worker_id\":1,\"event\":{}}", "event.data: missing");
        assertError("{\"worker_id\":1,\"event\":{\"data\":\"wiped\"}}", "event.data", "wiped");
        assertError("{\"worker_id\":1,\"event\":{\"data\":{\"moved\":{}}}}", "event.data", "moved");
        assertError(
                "{\"worker_id\":1,\"storage_tier\":\"tape\",\"event\":{\"data\":\"cleared\"}}", "storage_tier", "tape");
        assertError("{\"worker_id\":1,\"event\":{\"dp_rank\":4294967296,\"data\":\"cleared\"}}", "event.dp_rank");
        assertError(
                "{\"worker_id\":1,\"event\":{\"data\":{\"stored\":{\"blocks\":[{\"block_hash\":1,"
                        + "\"tokens_hash\":2},{\"block_hash\":3}]}}}}",
                "event.data.stored.blocks[1].tokens_hash: missing");
        assertError(
                "{\"worker_id\":1,\"event\":{\"data\":{\"stored\":{\"parent_hash\":null}}}}",
                "event.data.stored.blocks: missing");
        assertError(
                "{\"worker_id\":1,\"event\":{\"data\":{\"removed\":{\"block_hashes\":[1,\"2\"]}}}}",
                "event.data.removed.block_hashes[1]");
        assertError("{\"worker_id\":1,", "invalid JSON");
        assertError("{\"worker_id\":1,\"event\":{\"data\":\"cleared\"}} {}", "after");
        assertError("[1]", "RouterEvent: expected an object");
    }

    private static void assertError(String json, String... parts) {
        assertThatThrownBy(() -> RouterEventJson.fromJson(json))
                .isInstanceOf(EventJsonException.class)
                .satisfies(e -> {
                    for (String part : parts) {
                        assertThat(e.getMessage()).contains(part);
                    }
                });
    }
}
