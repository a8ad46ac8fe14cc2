package io.kvindexer.indexer.sim;

import io.kvindexer.indexer.sim.EngineEventEncoder.Format;
import io.kvindexer.indexer.sim.EngineEventEncoder.HashMode;
import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The encoder reproduces the golden payloads of wire spec Appendix A byte for byte (inputs of §6). */
class EngineEventEncoderTest {

    private static final double TS = 1757500000.25;
    private static final SimEvent STORED_A = SimEvent.stored(new long[] {111, 222}, null,
            new int[] {1, 2, 3, 4, 5, 6, 7, 8}, 4, "GPU", null);
    private static final SimEvent REMOVED_B = SimEvent.removed(new long[] {111}, "GPU");
    private static final SimEvent CLEARED_C = SimEvent.cleared();

    private static String hex(Format format, HashMode mode, List<SimEvent> events, Integer rank) {
        return HexFormat.of().formatHex(new EngineEventEncoder(format, mode).encode(TS, events, rank));
    }

    @Test
    void currentVllmMapEvents() {
        assertThat(hex(Format.MAP, HashMode.U64, List.of(STORED_A), 0)).isEqualTo(
                "93cb41da3054981000009188a474797065ab426c6f636b53746f726564ac626c6f636b5f686173686573926fccdeb170"
                + "6172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473980102030405060708aa626c6f636b5f73697a6504"
                + "a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c000");
        assertThat(hex(Format.MAP, HashMode.U64, List.of(REMOVED_B), 0)).isEqualTo(
                "93cb41da3054981000009183a474797065ac426c6f636b52656d6f766564ac626c6f636b5f686173686573916fa66d65"
                + "6469756da347505500");
        assertThat(hex(Format.MAP, HashMode.U64, List.of(CLEARED_C), 0)).isEqualTo(
                "93cb41da3054981000009181a474797065b0416c6c426c6f636b73436c656172656400");
    }

    @Test
    void vllm023PositionalEvents() {
        assertThat(hex(Format.ARRAY12, HashMode.U64, List.of(STORED_A), 0)).isEqualTo(
                "93cb41da305498100000919cab426c6f636b53746f726564926fccdec098010203040506070804c0a3475055c0c0c0c0"
                + "c000");
        assertThat(hex(Format.ARRAY12, HashMode.U64, List.of(REMOVED_B), 0)).isEqualTo(
                "93cb41da3054981000009194ac426c6f636b52656d6f766564916fa3475055c000");
        assertThat(hex(Format.ARRAY12, HashMode.U64, List.of(CLEARED_C), 0)).isEqualTo(
                "93cb41da3054981000009191b0416c6c426c6f636b73436c656172656400");
    }

    @Test
    void vllm090TwoElementEnvelope() {
        assertThat(hex(Format.ARRAY6, HashMode.U64, List.of(STORED_A), 0)).isEqualTo(
                "92cb41da3054981000009196ab426c6f636b53746f726564926fccdec098010203040506070804c0");
        assertThat(hex(Format.ARRAY6, HashMode.U64, List.of(REMOVED_B), 0)).isEqualTo(
                "92cb41da3054981000009192ac426c6f636b52656d6f766564916f");
        assertThat(hex(Format.ARRAY6, HashMode.U64, List.of(CLEARED_C), 0)).isEqualTo(
                "92cb41da3054981000009191b0416c6c426c6f636b73436c6561726564");
    }

    @Test
    void sglangPositionalEvents() {
        assertThat(hex(Format.SGLANG7, HashMode.I64, List.of(STORED_A), 0)).isEqualTo(
                "93cb41da3054981000009197ab426c6f636b53746f726564926fccdec098010203040506070804c0a347505500");
        assertThat(hex(Format.SGLANG7, HashMode.I64, List.of(SimEvent.removed(new long[] {-2}, "GPU")), 0))
                .isEqualTo("93cb41da3054981000009193ac426c6f636b52656d6f76656491fea347505500");
    }

    @Test
    void unsignedHashesAboveLongMaxUseUint64() {
        long max = -1L; // 2^64-1
        long high = Long.MIN_VALUE + 1; // 2^63+1
        assertThat(hex(Format.MAP, HashMode.U64, List.of(SimEvent.removed(new long[] {max, high}, "GPU")), 0))
                .isEqualTo("93cb41da3054981000009183a474797065ac426c6f636b52656d6f766564ac626c6f636b5f68617368657392cfffffff"
                        + "ffffffffffcf8000000000000001a66d656469756da347505500");
    }

    @Test
    void emptyBatchAndUnrankedEnvelope() {
        assertThat(hex(Format.MAP, HashMode.U64, List.of(), 0)).isEqualTo("93cb41da3054981000009000");
        assertThat(hex(Format.MAP, HashMode.U64, List.of(CLEARED_C), null)).isEqualTo(
                "93cb41da3054981000009181a474797065b0416c6c426c6f636b73436c6561726564c0");
    }

    @Test
    void bin32HashCarriesTheKeyInItsLastEightBytes() {
        String hex = hex(Format.MAP, HashMode.BIN32, List.of(SimEvent.removed(new long[] {0x1122334455667788L}, "GPU")), 0);
        int bin = hex.indexOf("91c420"); // array(1), bin8 of 32 bytes
        assertThat(bin).isPositive();
        String digest = hex.substring(bin + 6, bin + 6 + 64);
        assertThat(digest).endsWith("1122334455667788");
    }

    @Test
    void mixedShapesInOneBatch() {
        String hex = hex(Format.MAP, HashMode.U64,
                List.of(REMOVED_B, new SimEvent.Shaped(REMOVED_B, Format.ARRAY12)), 0);
        assertThat(hex).isEqualTo("93cb41da3054981000009283a474797065ac426c6f636b52656d6f766564ac626c6f636b5f686173686573916f"
                + "a66d656469756da3475055" + "94ac426c6f636b52656d6f766564916fa3475055c0" + "00");
    }
}
