package io.kvindexer.indexer.event;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvindexer.indexer.reliability.ReliabilityReport;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * At least 100k hostile payloads (seeded): mutated golden payloads, random msgpack trees, near-valid batches with
 * wrong types, and headers that declare huge lengths. Nothing but {@link EventDecodeException} may escape, and no
 * input may make the decoder allocate in proportion to a length it only declares.
 */
class HostileInputDecoderFuzzTest {

    private static final long ALLOCATION_BOUND = 4L * 1024 * 1024;
    private final EngineEventDecoder decoder = new EngineEventDecoder();
    private final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Test
    void hundredThousandHostilePayloadsOnlyEverFailTyped() throws Exception {
        int iterations = ReliabilityReport.scaled(120_000, 10);
        Random random = new Random(0x5eed_2026L);
        List<byte[]> goldens = new ArrayList<>();
        GoldenPayloads.ALL.values().forEach(h -> goldens.add(Msgpack.hex(h)));
        Map<String, Integer> outcomes = new TreeMap<>();
        long maxAllocated = 0;
        long start = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            byte[] input = switch (i % 4) {
                case 0 -> mutate(goldens.get(random.nextInt(goldens.size())), random);
                case 1 -> randomMsgpack(random);
                case 2 -> nearValidBatch(random);
                default -> hugeDeclaredLength(random);
            };
            long before = threads.getCurrentThreadAllocatedBytes();
            String outcome;
            try {
                decoder.decode(input);
                outcome = "decoded";
            } catch (EventDecodeException e) {
                assertThat(e.getMessage()).isNotBlank();
                outcome = e.kind();
            } catch (Throwable t) {
                throw new AssertionError(
                        "input " + i + " escaped with " + t + ": "
                                + HexFormat.of().formatHex(input),
                        t);
            }
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            maxAllocated = Math.max(maxAllocated, allocated);
            assertThat(allocated)
                    .as("bytes allocated decoding input %d (%d bytes)", i, input.length)
                    .isLessThan(ALLOCATION_BOUND + 64L * input.length);
            outcomes.merge(outcome, 1, Integer::sum);
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertThat(outcomes.getOrDefault("decoded", 0)).isPositive();
        assertThat(outcomes.size()).isGreaterThan(3);
        System.out.println("decoder fuzz: " + iterations + " inputs in " + ms + " ms, max allocation per decode "
                + maxAllocated + " B, outcomes " + outcomes);
        ReliabilityReport.record(new ReliabilityReport.Row(
                "decoder-fuzz",
                "hostile msgpack payloads (mutated" + " goldens, random trees, wrong types, huge declared lengths)",
                "seeded, in-process decoder",
                iterations,
                -1,
                -1,
                -1,
                -1,
                0,
                -1,
                "only EventDecodeException; max " + maxAllocated + " B allocated per decode; outcomes "
                        + outcomes.toString().replace("|", "/")));
    }

    private static byte[] mutate(byte[] original, Random random) {
        return HostileInputs.mutate(original, random);
    }

    private static byte[] randomMsgpack(Random random) throws IOException {
        return HostileInputs.randomMsgpack(random);
    }

    private static byte[] nearValidBatch(Random random) throws IOException {
        return HostileInputs.nearValidBatch(random);
    }

    private static byte[] hugeDeclaredLength(Random random) {
        return HostileInputs.hugeDeclaredLength(random);
    }
}
