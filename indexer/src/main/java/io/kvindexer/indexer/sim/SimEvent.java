package io.kvindexer.indexer.sim;

import java.util.Objects;

/**
 * An event as the simulated engine emits it, before encoding. Richer than the indexer's own model
 * ({@code event.KvEvent}) because the simulator must be able to write every wire field, unknown tags and
 * per-event shapes.
 */
public sealed interface SimEvent
        permits SimEvent.Stored, SimEvent.Removed, SimEvent.Cleared, SimEvent.Unknown, SimEvent.Shaped {

    /**
     * {@code BlockStored}: a chain of full blocks.
     *
     * @param parent   engine hash of the block before {@code hashes[0]}; null at the start of a sequence
     * @param medium   null writes nil (pre-#19737 engines)
     * @param loraId   deprecated numeric adapter id; null writes nil
     * @param loraName adapter name; null writes nil
     * @param groupIdx KV-cache group; null leaves the optional key out (map) or writes nil (array)
     * @param eagle    written as SGLang's EAGLE bigram pairs {@code [tokens[j], tokens[j + 1]]}, one per token but the
     *                 last: {@code tokens} then holds one token more than the blocks
     */
    record Stored(
            long[] hashes,
            Long parent,
            int[] tokens,
            int blockSize,
            String medium,
            Integer loraId,
            String loraName,
            Integer groupIdx,
            boolean eagle)
            implements SimEvent {
        public Stored {
            Objects.requireNonNull(hashes, "hashes");
            Objects.requireNonNull(tokens, "tokens");
        }
    }

    /** {@code BlockRemoved}. */
    record Removed(long[] hashes, String medium, Integer groupIdx) implements SimEvent {
        public Removed {
            Objects.requireNonNull(hashes, "hashes");
        }
    }

    /** {@code AllBlocksCleared}. */
    record Cleared() implements SimEvent {}

    /** An event with a tag the indexer does not know (e.g. the proposed {@code BlockInactive}). */
    record Unknown(String type, long[] hashes) implements SimEvent {}

    /** Forces one event into another format's shape, for batches that mix map and array events. */
    record Shaped(SimEvent event, EngineEventEncoder.Format format) implements SimEvent {}

    static Stored stored(long[] hashes, Long parent, int[] tokens, int blockSize, String medium, String loraName) {
        return new Stored(hashes, parent, tokens, blockSize, medium, null, loraName, null, false);
    }

    static Removed removed(long[] hashes, String medium) {
        return new Removed(hashes, medium, null);
    }

    static Cleared cleared() {
        return new Cleared();
    }
}
