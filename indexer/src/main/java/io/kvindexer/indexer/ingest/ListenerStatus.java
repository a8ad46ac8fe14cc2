package io.kvindexer.indexer.ingest;

import io.kvindexer.indexer.common.MetricLabel;

/** Lifecycle of one ZMQ listener, as {@code /workers} reports it. */
public enum ListenerStatus implements MetricLabel {
    PENDING,
    ACTIVE,
    PAUSED,
    FAILED;

    /** Pending or active: it has a socket and reads its engine's stream (paused and failed ones read nothing). */
    public boolean running() {
        return this == PENDING || this == ACTIVE;
    }
}
