package io.kvindexer.indexer.ingest;

import java.time.Duration;
import java.util.Objects;

/**
 * The ingest flags: {@code --ingest-queue-bytes} and {@code --degraded-hold}.
 *
 * @param queueBytes   bytes of batches read from engines and not yet applied to the index, over every listener
 *                     ({@link InflightBytes}); at the bound the listeners stop reading and ZeroMQ's queues fill, so
 *                     an overflow becomes a gap that is replayed, never an out-of-memory
 * @param degradedHold how long a degraded listener stays so after its last loss ({@link Exactness})
 */
public record IngestSettings(long queueBytes, Duration degradedHold) {

    /** {@code --ingest-queue-bytes}' default: an eighth of the heap. */
    public static final String DEFAULT_QUEUE = "12.5%";

    public IngestSettings {
        if (queueBytes < 1) {
            throw new IllegalArgumentException("the ingest queue must hold at least one byte, got " + queueBytes);
        }
        Objects.requireNonNull(degradedHold, "degradedHold");
        if (degradedHold.isNegative()) {
            throw new IllegalArgumentException("the degraded hold must not be negative, got " + degradedHold);
        }
    }

    /** The defaults: an eighth of the heap (at least 16 MiB), a hold of one minute. */
    public static IngestSettings defaults() {
        return new IngestSettings(InflightBytes.defaultBudget(), ListenerOptions.DEFAULT_DEGRADED_HOLD);
    }
}
