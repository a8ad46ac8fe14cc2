package io.kvindexer.indexer.sim;

import static io.kvindexer.indexer.event.GoldenPayloads.*;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.sim.EngineEventEncoder.Format;
import io.kvindexer.indexer.sim.EngineEventEncoder.HashMode;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The encoder reproduces the golden payloads of GoldenPayloads byte for byte: the very
 * payloads {@code event.EngineEventDecoderGoldenTest} decodes, so encoder and decoder agree on one copy.
 */
class EngineEventEncoderTest {

    private static final double TS = 1757500000.25;
    private static final SimEvent STORED_A =
            SimEvent.stored(new long[] {111, 222}, null, new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, "GPU", null);
    private static final SimEvent REMOVED_B = SimEvent.removed(new long[] {111}, "GPU");
    private static final SimEvent CLEARED_C = SimEvent.cleared();

    private static String hex(Format format, HashMode mode, List<SimEvent> events, Integer rank) {
        return HexFormat.of().formatHex(new EngineEventEncoder(format, mode).encode(TS, events, rank));
    }

    /** Each encoder input of the wire spec next to the golden payload the decoder tests read. */
    static Stream<Arguments> goldenPayloads() {
        return Stream.of(
                Arguments.of("vllm map stored", Format.MAP, HashMode.U64, List.of(STORED_A), 0, VLLM_MAP_STORED_MIN),
                Arguments.of("vllm map removed", Format.MAP, HashMode.U64, List.of(REMOVED_B), 0, VLLM_MAP_REMOVED_MIN),
                Arguments.of("vllm map cleared", Format.MAP, HashMode.U64, List.of(CLEARED_C), 0, VLLM_MAP_CLEARED),
                Arguments.of(
                        "vllm 0.2.3 positional stored",
                        Format.ARRAY12,
                        HashMode.U64,
                        List.of(STORED_A),
                        0,
                        VLLM_ARR023_STORED),
                Arguments.of(
                        "vllm 0.2.3 positional removed",
                        Format.ARRAY12,
                        HashMode.U64,
                        List.of(REMOVED_B),
                        0,
                        VLLM_ARR023_REMOVED),
                Arguments.of(
                        "vllm 0.2.3 positional cleared",
                        Format.ARRAY12,
                        HashMode.U64,
                        List.of(CLEARED_C),
                        0,
                        VLLM_ARR023_CLEARED),
                Arguments.of(
                        "vllm 0.9.0 two-element envelope stored",
                        Format.ARRAY6,
                        HashMode.U64,
                        List.of(STORED_A),
                        0,
                        VLLM_ARR090_STORED),
                Arguments.of(
                        "vllm 0.9.0 two-element envelope removed",
                        Format.ARRAY6,
                        HashMode.U64,
                        List.of(REMOVED_B),
                        0,
                        VLLM_ARR090_REMOVED),
                Arguments.of(
                        "vllm 0.9.0 two-element envelope cleared",
                        Format.ARRAY6,
                        HashMode.U64,
                        List.of(CLEARED_C),
                        0,
                        VLLM_ARR090_CLEARED),
                Arguments.of(
                        "sglang positional stored",
                        Format.SGLANG7,
                        HashMode.I64,
                        List.of(STORED_A),
                        0,
                        SGLANG_ARR_STORED),
                Arguments.of(
                        "sglang positional removed, negative hash",
                        Format.SGLANG7,
                        HashMode.I64,
                        List.of(SimEvent.removed(new long[] {-2}, "GPU")),
                        0,
                        SGLANG_ARR_REMOVED_NEG),
                // 2^64-1 and 2^63+1: unsigned hashes above Long.MAX_VALUE use uint64
                Arguments.of(
                        "unsigned hashes above long max use uint64",
                        Format.MAP,
                        HashMode.U64,
                        List.of(SimEvent.removed(new long[] {-1L, Long.MIN_VALUE + 1}, "GPU")),
                        0,
                        VLLM_MAP_REMOVED_U64),
                Arguments.of("empty batch", Format.MAP, HashMode.U64, List.of(), 0, VLLM_MAP_EMPTY_BATCH),
                Arguments.of(
                        "unranked envelope", Format.MAP, HashMode.U64, List.of(CLEARED_C), null, VLLM_MAP_UNRANKED));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("goldenPayloads")
    void encodesTheGoldenPayload(
            String name, Format format, HashMode mode, List<SimEvent> events, Integer rank, String golden) {
        assertThat(hex(format, mode, events, rank)).isEqualTo(golden.replaceAll("\\s+", ""));
    }

    @Test
    void bin32HashCarriesTheKeyInItsLastEightBytes() {
        String hex =
                hex(Format.MAP, HashMode.BIN32, List.of(SimEvent.removed(new long[] {0x1122334455667788L}, "GPU")), 0);
        int bin = hex.indexOf("91c420"); // array(1), bin8 of 32 bytes
        assertThat(bin).isPositive();
        String digest = hex.substring(bin + 6, bin + 6 + 64);
        assertThat(digest).endsWith("1122334455667788");
    }

    /**
     * SGLang's EAGLE page (its _record_store_event): {@code block_size} pairs {@code [t_j, t_j+1]}, a tuple msgspec
     * writes as an array, for the page's tokens and the next page's first.
     */
    @Test
    void anEagleStoreWritesSglangsBigramPairs() {
        SimEvent page = new SimEvent.Stored(
                new long[] {111}, null, new int[] {1, 2, 3, 4, 5}, 4, "GPU", null, null, null, true);
        assertThat(hex(Format.SGLANG7, HashMode.I64, List.of(page), 0))
                .isEqualTo("93cb41da305498100000" + "91" + "97" + "ab426c6f636b53746f726564" + "916f" + "c0" + "94"
                        + "920102" + "920203" + "920304" + "920405" + "04" + "c0" + "a3475055" + "00");
    }

    @Test
    void mixedShapesInOneBatch() {
        String hex =
                hex(Format.MAP, HashMode.U64, List.of(REMOVED_B, new SimEvent.Shaped(REMOVED_B, Format.ARRAY12)), 0);
        assertThat(hex)
                .isEqualTo("93cb41da3054981000009283a474797065ac426c6f636b52656d6f766564ac626c6f636b5f686173686573916f"
                        + "a66d656469756da3475055" + "94ac426c6f636b52656d6f766564916fa3475055c0" + "00");
    }
}
