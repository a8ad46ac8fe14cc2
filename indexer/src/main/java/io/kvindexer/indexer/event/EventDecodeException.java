package io.kvindexer.indexer.event;

import java.util.Objects;

/**
 * A payload that is not a valid engine event batch. {@link #kind()} is a short, bounded label for metrics (one
 * of {@link DecodeErrorKind}'s labels); the message names what was wrong and where.
 */
public final class EventDecodeException extends Exception {

    private final DecodeErrorKind kind;

    public EventDecodeException(DecodeErrorKind kind, String message) {
        super(message);
        this.kind = Objects.requireNonNull(kind, "kind");
    }

    public EventDecodeException(DecodeErrorKind kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = Objects.requireNonNull(kind, "kind");
    }

    /** The metric label of {@link #errorKind()}, e.g. {@code bad_event}. */
    public String kind() {
        return kind.label();
    }

    public DecodeErrorKind errorKind() {
        return kind;
    }
}
