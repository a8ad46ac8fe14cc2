package io.kvindexer.bench;

import io.kvindexer.indexer.event.EngineEventDecoder;
import io.kvindexer.indexer.event.EventDecodeException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Single-thread throughput of {@link EngineEventDecoder} on vLLM-shaped batches (no sockets, no index), with a
 * floor measured in the same run: msgpack-core walking the same payload with {@code skipValue()} (the cheapest
 * generic pass over those bytes). Figures are block events per second; the ratio to the floor is what compares
 * across machines.
 *
 * <p>Shapes: 16 map-encoded {@code BlockStored} events per batch (uint64 hashes, nil extra keys per block,
 * group 0, full attention), 16 blocks of 16 tokens or 4 blocks of 128 tokens each; and the positional-array
 * (vLLM ≤ 0.23) form of the block-size-128 batch.
 *
 * <p>Run: {@code bin/bench DecoderBench [--repetitions 3] [--seconds 2] [--json out.json]}
 */
@Command(
        name = "decoder-bench",
        description = "Single-thread EngineEventDecoder throughput on vLLM-shaped batches (map and array, block size"
                + " 16 and 128) beside a same-run floor: msgpack-core's skipValue over the same payload.")
public final class DecoderBench extends RepeatedBench<DecoderBench.Rep> {

    private static final int EVENTS_PER_BATCH = 16;

    @Option(names = "--seconds", description = "seconds per shape and repetition")
    double seconds = 2;

    /** One shape's figures in one repetition. */
    public record Rep(String shape, int bytes, int blocks, double blockEventsPerS, double floorBlockEventsPerS) {}

    public static void main(String[] args) {
        System.exit(new CommandLine(new DecoderBench()).execute(args));
    }

    @Override
    public List<Rep> runBench() throws Exception {
        Map<String, byte[]> shapes = new LinkedHashMap<>();
        shapes.put("map_bs16", batch(16, 16, true));
        shapes.put("map_bs128", batch(4, 128, true));
        shapes.put("array_bs128", batch(4, 128, false));
        EngineEventDecoder decoder = new EngineEventDecoder();
        List<Rep> all = new ArrayList<>();
        for (int r = 0; r < runs.repetitions; r++) {
            for (Map.Entry<String, byte[]> shape : shapes.entrySet()) {
                all.add(measure(shape.getKey(), shape.getValue(), decoder, seconds));
            }
        }
        return all;
    }

    @Override
    void summarize(List<Rep> reps, Map<String, Object> out) {
        out.put("benchmark", "DecoderBench");
        out.put("java", Runtime.version().toString());
        out.put("cpus", Runtime.getRuntime().availableProcessors());
        for (String shape : new LinkedHashSet<>(reps.stream().map(Rep::shape).toList())) {
            List<Rep> mine = reps.stream().filter(r -> r.shape().equals(shape)).toList();
            double decode = Medians.of(mine, Rep::blockEventsPerS);
            double floor = Medians.of(mine, Rep::floorBlockEventsPerS);
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("payload_bytes", mine.getFirst().bytes());
            s.put("blocks_per_batch", mine.getFirst().blocks());
            s.put("block_events_per_s", Math.round(decode));
            s.put("floor_block_events_per_s", Math.round(floor));
            s.put("ratio_to_floor", Math.round(decode / floor * 1000) / 1000.0);
            s.put("repetitions", mine.size());
            out.put(shape, s);
        }
    }

    static Rep measure(String shape, byte[] payload, EngineEventDecoder decoder, double seconds)
            throws EventDecodeException, IOException {
        int blocks = EVENTS_PER_BATCH * (shape.endsWith("bs16") ? 16 : 4);
        double decodeRate =
                blocks * rate(seconds, () -> decoder.decode(payload).events().size());
        double floorRate = blocks
                * rate(seconds, () -> {
                    try (MessageUnpacker in = MessagePack.newDefaultUnpacker(payload)) {
                        in.skipValue();
                        return 1;
                    }
                });
        System.out.printf(
                Locale.ROOT,
                "%-12s %,7d B  decode %,12.0f block events/s  floor %,12.0f  ratio %.2f%n",
                shape,
                payload.length,
                decodeRate,
                floorRate,
                decodeRate / floorRate);
        return new Rep(shape, payload.length, blocks, decodeRate, floorRate);
    }

    private interface Pass {
        int run() throws EventDecodeException, IOException;
    }

    /** Passes per second over about {@code seconds}, after a warm-up of a quarter of that. */
    private static double rate(double seconds, Pass pass) throws EventDecodeException, IOException {
        long sink = 0;
        long warmEnd = System.nanoTime() + (long) (seconds * 0.25e9);
        while (System.nanoTime() < warmEnd) {
            sink += pass.run();
        }
        long start = System.nanoTime();
        long end = start + (long) (seconds * 1e9);
        long n = 0;
        long now;
        do {
            for (int i = 0; i < 64; i++) {
                sink += pass.run();
            }
            n += 64;
            now = System.nanoTime();
        } while (now < end);
        if (sink == 42) {
            System.out.print("");
        }
        return n / ((now - start) / 1e9);
    }

    /** A batch of {@value #EVENTS_PER_BATCH} stores of {@code blocksPerEvent} blocks, map or positional form. */
    static byte[] batch(int blocksPerEvent, int blockSize, boolean map) throws IOException {
        long hash = 0x9e3779b97f4a7c15L;
        try (MessageBufferPacker out = MessagePack.newDefaultBufferPacker()) {
            out.packArrayHeader(3).packDouble(1757500000.25).packArrayHeader(EVENTS_PER_BATCH);
            for (int e = 0; e < EVENTS_PER_BATCH; e++) {
                if (map) {
                    out.packMapHeader(11).packString("type").packString("BlockStored");
                    out.packString("block_hashes");
                } else {
                    out.packArrayHeader(12).packString("BlockStored");
                }
                out.packArrayHeader(blocksPerEvent);
                for (int b = 0; b < blocksPerEvent; b++) {
                    hash = hash * 6364136223846793005L + 1442695040888963407L;
                    out.packBigInteger(new java.math.BigInteger(Long.toUnsignedString(hash)));
                }
                if (map) {
                    out.packString("parent_block_hash");
                }
                out.packNil();
                if (map) {
                    out.packString("token_ids");
                }
                out.packArrayHeader(blocksPerEvent * blockSize);
                for (int t = 0; t < blocksPerEvent * blockSize; t++) {
                    out.packInt(1000 + (e * 977 + t * 31) % 150_000);
                }
                field(out, map, "block_size").packInt(blockSize);
                field(out, map, "lora_id").packNil();
                field(out, map, "medium").packString("GPU");
                field(out, map, "lora_name").packNil();
                field(out, map, "extra_keys").packArrayHeader(blocksPerEvent);
                for (int b = 0; b < blocksPerEvent; b++) {
                    out.packNil();
                }
                field(out, map, "group_idx").packInt(0);
                field(out, map, "kv_cache_spec_kind").packString("full_attention");
                if (!map) {
                    out.packNil(); // kv_cache_spec_sliding_window
                }
            }
            out.packInt(0);
            return out.toByteArray();
        }
    }

    private static MessageBufferPacker field(MessageBufferPacker out, boolean map, String key) throws IOException {
        if (map) {
            out.packString(key);
        }
        return out;
    }
}
