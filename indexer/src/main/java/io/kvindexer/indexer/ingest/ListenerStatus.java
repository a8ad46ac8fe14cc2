package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.common.MetricLabel;

/** Lifecycle of one ZMQ listener, as {@code /workers} reports it. */
public enum ListenerStatus implements MetricLabel {
    PENDING,
    ACTIVE,
    PAUSED,
    FAILED
}
