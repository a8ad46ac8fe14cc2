package io.kvindexer.indexer.event;

import java.util.ArrayList;
import java.util.List;

import static io.kvindexer.indexer.event.Msgpack.hex;
import static io.kvindexer.indexer.event.Msgpack.list;
import static io.kvindexer.indexer.event.Msgpack.map;

/**
 * Prints decoder throughput (not a test): a real vLLM map batch (2 blocks of 4 tokens) and a large batch of
 * 16 BlockStored events of 16 blocks × 16 tokens with u64 hashes. Run from {@code indexer/}:
 * {@code java -cp target/classes:target/test-classes:$(cat target/cp.txt) io.kvindexer.indexer.event.DecoderThroughput}
 * after {@code mvn -o -q dependency:build-classpath -Dmdep.outputFile=target/cp.txt}.
 */
public final class DecoderThroughput {

    private DecoderThroughput() {
    }

    public static void main(String[] args) throws Exception {
        EngineEventDecoder decoder = new EngineEventDecoder();
        byte[] small = hex(GoldenPayloads.VLLM_MAP_STORED_REAL);
        List<Object> events = new ArrayList<>();
        long hash = 0x9e3779b97f4a7c15L;
        for (int e = 0; e < 16; e++) {
            List<Object> hashes = new ArrayList<>();
            List<Object> tokens = new ArrayList<>();
            for (int b = 0; b < 16; b++) {
                hash = hash * 6364136223846793005L + 1442695040888963407L;
                hashes.add(new java.math.BigInteger(Long.toUnsignedString(hash)));
                for (int t = 0; t < 16; t++) {
                    tokens.add((long) (1000 + e * 256 + b * 16 + t));
                }
            }
            events.add(map("type", "BlockStored", "block_hashes", hashes, "parent_block_hash", null,
                    "token_ids", tokens, "block_size", 16L, "lora_id", null, "medium", "GPU", "lora_name", null,
                    "extra_keys", list(new Object[16]), "group_idx", 0L, "kv_cache_spec_kind", "full_attention"));
        }
        byte[] large = Msgpack.pack(list(Msgpack.TS, events, 0L));
        for (int round = 0; round < 3; round++) {
            report("small (" + small.length + " B, 2 blocks)", decoder, small, 2_000_000, 2);
            report("large (" + large.length + " B, 256 blocks)", decoder, large, 20_000, 256);
        }
    }

    private static void report(String name, EngineEventDecoder decoder, byte[] payload, int iterations, int blocks)
            throws EventDecodeException {
        long sink = 0;
        long start = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            sink += decoder.decode(payload).events().size();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        System.out.printf("%-28s %,12.0f batches/s %,14.0f blocks/s %8.1f MB/s (sink %d)%n", name,
                iterations / seconds, iterations * (double) blocks / seconds,
                iterations * (double) payload.length / seconds / 1e6, sink);
    }
}
