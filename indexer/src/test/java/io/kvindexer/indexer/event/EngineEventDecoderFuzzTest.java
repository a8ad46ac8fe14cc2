package io.kvindexer.indexer.event;

import static io.kvindexer.indexer.event.Msgpack.hex;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Damaged payloads: the decoder either decodes them into a well-formed batch or throws {@link EventDecodeException}
 * with one of its documented kinds; no other throwable, and never the catch-all {@code malformed} kind (which
 * would mean a decoder defect surfaced as an unchecked exception).
 */
class EngineEventDecoderFuzzTest {

    private static final Set<String> KINDS =
            Set.of("empty_payload", "not_msgpack", "truncated", "bad_envelope", "bad_event", "bad_hash", "bad_token");

    private final EngineEventDecoder decoder = new EngineEventDecoder();

    @Test
    void everyStrictPrefixOfEveryGoldenPayloadIsAnError() {
        int checked = 0;
        for (var golden : GoldenPayloads.ALL.entrySet()) {
            byte[] full = hex(golden.getValue());
            for (int len = 0; len < full.length; len++) {
                byte[] prefix = Arrays.copyOf(full, len);
                try {
                    decoder.decode(prefix);
                    fail(golden.getKey() + " prefix of " + len + " bytes decoded");
                } catch (EventDecodeException e) {
                    assertThat(e.kind())
                            .as(golden.getKey() + "[0," + len + "): " + e.getMessage())
                            .isIn(KINDS);
                }
                checked++;
            }
        }
        assertThat(checked).isGreaterThan(1000);
    }

    @Test
    void seededMutationsNeverEscapeAsAnotherThrowable() {
        List<byte[]> goldens = new ArrayList<>();
        GoldenPayloads.ALL.values().forEach(h -> goldens.add(hex(h)));
        Random random = new Random(20261201L);
        Map<String, Integer> outcomes = new TreeMap<>();
        int iterations = 20_000;
        for (int i = 0; i < iterations; i++) {
            byte[] original = goldens.get(random.nextInt(goldens.size()));
            byte[] mutated = mutate(original, random);
            String outcome;
            try {
                KvEventBatch batch = decoder.decode(mutated);
                assertWellFormed(batch);
                outcome = "decoded";
            } catch (EventDecodeException e) {
                assertThat(e.kind())
                        .as("iteration " + i + ": " + e.getMessage())
                        .isIn(KINDS);
                assertThat(e.getMessage()).isNotBlank();
                outcome = e.kind();
            } catch (Throwable t) {
                throw new AssertionError(
                        "iteration " + i + " escaped with " + t + " for "
                                + java.util.HexFormat.of().formatHex(mutated),
                        t);
            }
            outcomes.merge(outcome, 1, Integer::sum);
        }
        // the loop must exercise both paths, or it proves nothing
        assertThat(outcomes.get("decoded")).isPositive();
        assertThat(outcomes.values().stream().mapToInt(Integer::intValue).sum() - outcomes.get("decoded"))
                .isPositive();
        System.out.println("decoder mutation outcomes over " + iterations + " payloads: " + outcomes);
    }

    private static byte[] mutate(byte[] original, Random random) {
        byte[] out = original.clone();
        switch (random.nextInt(5)) {
            case 0 -> { // flip 1-3 random bytes to random values
                for (int k = 1 + random.nextInt(3); k > 0; k--) {
                    out[random.nextInt(out.length)] = (byte) random.nextInt(256);
                }
            }
            case 1 -> { // flip single bits
                for (int k = 1 + random.nextInt(4); k > 0; k--) {
                    out[random.nextInt(out.length)] ^= (byte) (1 << random.nextInt(8));
                }
            }
            case 2 -> out = Arrays.copyOf(out, random.nextInt(out.length)); // truncate
            case 3 -> { // set one byte to a msgpack type marker with big lengths (array32, map32, str32, bin32, u64)
                int[] markers = {0xdd, 0xdf, 0xdb, 0xc6, 0xcf, 0xd3, 0xdc, 0xde, 0xc4, 0xc0, 0x9f, 0x8f, 0xbf};
                out[random.nextInt(out.length)] = (byte) markers[random.nextInt(markers.length)];
            }
            default -> { // delete or duplicate a slice
                int from = random.nextInt(out.length);
                int len = 1 + random.nextInt(Math.min(8, out.length - from));
                if (random.nextBoolean()) {
                    byte[] shorter = new byte[out.length - len];
                    System.arraycopy(out, 0, shorter, 0, from);
                    System.arraycopy(out, from + len, shorter, from, out.length - from - len);
                    out = shorter;
                } else {
                    byte[] longer = new byte[out.length + len];
                    System.arraycopy(out, 0, longer, 0, from + len);
                    System.arraycopy(out, from, longer, from + len, out.length - from);
                    out = longer;
                }
            }
        }
        return out;
    }

    private static void assertWellFormed(KvEventBatch batch) {
        assertThat(batch.events()).doesNotContainNull();
        assertThat(batch.unknownEvents()).isNotNegative();
        assertThat(batch.ignoredEvents()).isNotNegative();
        for (KvEvent e : batch.events()) {
            switch (e) {
                case BlockStored s -> {
                    assertThat(s.blockHashes()).isNotNull();
                    assertThat(s.tokenIds()).isNotNull();
                    assertThat(s.blockSize()).isNotNegative();
                    assertThat(s.tier()).isNotNull();
                    if (s.mmHashes() != null) {
                        assertThat(s.mmHashes().length).isEqualTo(s.blockHashes().length);
                    }
                }
                case BlockRemoved r -> {
                    assertThat(r.blockHashes()).isNotNull();
                    assertThat(r.tier()).isNotNull();
                }
                case AllBlocksCleared c -> assertThat(c).isNotNull();
            }
        }
    }
}
