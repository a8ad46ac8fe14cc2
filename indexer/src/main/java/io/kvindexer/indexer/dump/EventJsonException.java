package io.kvindexer.indexer.dump;

/**
 * JSON that is not a valid RouterEvent or {@code /dump} document. The message names the field (as a path such as
 * {@code event.data.stored.blocks[2].tokens_hash}) or the dump key that was wrong.
 */
public final class EventJsonException extends Exception {

    public EventJsonException(String message) {
        super(message);
    }

    public EventJsonException(String message, Throwable cause) {
        super(message, cause);
    }
}
