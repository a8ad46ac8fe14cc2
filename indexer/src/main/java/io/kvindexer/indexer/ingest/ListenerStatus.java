package io.kvindexer.indexer.ingest;

/** Lifecycle of one ZMQ listener, as {@code /workers} reports it. */
public enum ListenerStatus {
    PENDING("pending"),
    ACTIVE("active"),
    PAUSED("paused"),
    FAILED("failed");

    private final String label;

    ListenerStatus(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
