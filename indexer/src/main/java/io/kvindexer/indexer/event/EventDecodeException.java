package io.kvindexer.indexer.event;

/**
 * A payload that is not a valid engine event batch. {@link #kind()} is a short, bounded label for metrics
 * (e.g. {@code not_msgpack}, {@code bad_envelope}, {@code bad_event}, {@code bad_hash}, {@code bad_token});
 * the message names what was wrong and where.
 */
public final class EventDecodeException extends Exception {

    private final String kind;

    public EventDecodeException(String kind, String message) {
        super(message);
        this.kind = kind;
    }

    public EventDecodeException(String kind, String message, Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public String kind() {
        return kind;
    }
}
