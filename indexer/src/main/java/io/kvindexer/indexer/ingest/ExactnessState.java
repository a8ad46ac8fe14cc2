package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.common.MetricLabel;

/**
 * How complete the index is for one listener's stream, as {@code /workers} and the metrics say it (docs/concepts.md,
 * exactness).
 */
public enum ExactnessState implements MetricLabel {
    /** every batch since registration was applied or replayed */
    EXACT,
    /** a gap is being replayed: batches are missing for now, the engine still has them */
    REPLAYING,
    /** batches are missing that could not be replayed; the index may under-report this worker for a while */
    DEGRADED
}
