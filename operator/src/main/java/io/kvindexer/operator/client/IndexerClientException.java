package io.kvindexer.operator.client;

/** A failed indexer call: {@code status} is the HTTP status, or -1 when the replica could not be reached. */
public class IndexerClientException extends RuntimeException {
    private final int status;

    public IndexerClientException(String message, int status, Throwable cause) {
        super(message, cause);
        this.status = status;
    }

    public int status() {
        return status;
    }

    public boolean unreachable() {
        return status < 0;
    }
}
